-- grain: one row per loaded file (by the first 16 hex digits of its key) and trip date whose
-- raw-points files the index says hold a trip of a driver in purge_requests (or of anyone: a record
-- without a plain-integer platformUserId, a line that is not JSON)
-- reads: file_drivers, purge_requests
select distinct left(f.file_key, 16) as prefix, f.trip_date::varchar as day
from file_drivers as f
semi join purge_requests as p
    on f.app_id is null
    or (f.app_id = p.app_id and (f.user_id is null or f.user_id = p.user_id or f.org_user_id = p.org_user_id))
where f.trip_date is not null
