-- every recorded request, purged or not, oldest first (operators, tests)
select id, app_id, platform_user_id, org_user_id, requested_at, purged_at, purged_trips
from deletion_requests
order by requested_at, id
