-- the requests no purge has acted on yet, oldest first: what the next purge acts on, and whom an
-- export leaves out before then
select id, app_id, platform_user_id, org_user_id, requested_at
from deletion_requests
where purged_at is null
order by requested_at, id
