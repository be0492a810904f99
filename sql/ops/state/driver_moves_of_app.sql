-- grain: one row per driver of one app in transit between cells (the bulk export answers each from
-- one cell only)
select platform_user_id, from_cell, to_cell, arrived_version
from driver_moves
where app_id = $app_id
order by platform_user_id
