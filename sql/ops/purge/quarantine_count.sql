-- How many lines the quarantine holds (before and after a scrub: the difference is what it removed).
-- grain: one row
-- reads: quarantine
select count(*)::bigint as n from quarantine
