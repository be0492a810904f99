-- the requests no purge has acted on yet of a cell's drivers (and of drivers never given a cell,
-- whose data no cell holds apart from what a folder from before cells kept), oldest first
select r.id, r.app_id, r.platform_user_id, r.org_user_id, r.requested_at
from deletion_requests as r
left join driver_cells as d on d.app_id = r.app_id and d.platform_user_id = r.platform_user_id
where r.purged_at is null and (d.cell = $cell or d.cell is null)
order by r.requested_at, r.id
