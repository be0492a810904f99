-- The trips a re-derivation keeps as stored, counted by why (rederive_restrict.sql).
-- grain: one row per reason
-- reads: rederive_kept_as_stored (temp)
select reason, count(*)::int as n from rederive_kept_as_stored group by reason
