-- grain: one row per warehouse trip of a user whose account was deleted
-- reads: purge_requests (app_id, user_id, org_user_id, requested_at)
select t.app_id, t.user_id, t.trip_id, t.trip_date::varchar as trip_date
from trips as t
semi join purge_requests as p on p.app_id = t.app_id and p.user_id = t.user_id
