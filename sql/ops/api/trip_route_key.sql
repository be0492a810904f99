-- grain: the served trip's route file key (trip date and the version that wrote it), or none
-- params: $app_id, $user_id BIGINT, $trip_id VARCHAR
select trip_date::varchar as trip_date, version
from trips
where user_id = $user_id and app_id = $app_id and trip_id = $trip_id
