-- The first rows a check (sql/checks/*.sql, in for check) finds: none, and it holds; a few are
-- enough to name in the report what it found.
-- grain: at most 5 offending rows
-- params: $since BIGINT (the check's)
select * from ({{check}}) limit 5
