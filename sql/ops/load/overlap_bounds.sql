-- One row: the union of the overlap ranges (NULLs when there are none).
-- reads: overlap_range
select min(range_start)::varchar as range_from, max(range_end)::varchar as range_to, count(*)::integer as accounts
from overlap_range
