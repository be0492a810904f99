-- How many of the re-derived file's trips are held by another file now (rederive_restrict.sql).
-- grain: one row
-- reads: rederive_elsewhere (temp)
select count(*)::int as n from rederive_elsewhere
