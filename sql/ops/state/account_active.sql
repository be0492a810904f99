-- grain: the active account of one user of one app (none when never registered or deleted), with
-- the cell its data lives in (null: no cells, or none given yet)
select a.platform_user_id, d.cell
from accounts as a
left join driver_cells as d on d.app_id = a.app_id and d.platform_user_id = a.platform_user_id
where a.app_id = $app_id and a.org_user_id = $org_user_id and a.deleted_at is null
