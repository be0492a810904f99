-- grain: the active account of one user of one app (none when never registered or deleted), with
-- the cell its data lives in (null: no cells, or none given yet) and, while it is being moved, the
-- cell it comes from and the target's version that serves it (null: not arrived yet)
select a.platform_user_id, d.cell, m.from_cell as previous_cell, m.arrived_version
from accounts as a
left join driver_cells as d on d.app_id = a.app_id and d.platform_user_id = a.platform_user_id
left join driver_moves as m on m.app_id = a.app_id and m.platform_user_id = a.platform_user_id
where a.app_id = $app_id and a.org_user_id = $org_user_id and a.deleted_at is null
