-- How many trips a re-derivation keeps as stored (their points are copied out of the earlier files).
-- grain: one row
-- reads: rederive_kept_as_stored (temp)
select count(*)::int as n from rederive_kept_as_stored
