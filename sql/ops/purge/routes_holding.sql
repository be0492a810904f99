-- grain: one row per route file (a trip date and version) that lists a trip of a driver in purge_requests
-- reads: route_file_drivers, purge_requests
select distinct r.trip_date::varchar as day, r.version
from route_file_drivers as r
semi join purge_requests as p on p.app_id = r.app_id and p.user_id = r.user_id
