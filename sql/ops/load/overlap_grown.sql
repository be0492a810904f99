-- One row: how many accounts' overlap ranges ops/load/overlap_widen.sql grew.
-- reads: overlap_range, overlap_range_next
select count(*)::integer as grown
from overlap_range_next as n
join overlap_range as r on r.app_id = n.app_id and r.user_id = n.user_id
where n.range_start <> r.range_start or n.range_end <> r.range_end
