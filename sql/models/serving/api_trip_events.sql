-- grain: one row per dangerous-driving event of one trip, in time order
-- params: $app_id, $user_id BIGINT, $trip_id VARCHAR, $zone VARCHAR
select
    type, description, start_lat, start_lng, end_lat, end_lng,
    strftime(timezone($zone, started_at), '%Y-%m-%d %H:%M:%S') as start_time,
    strftime(timezone($zone, ended_at), '%Y-%m-%d %H:%M:%S') as end_time
from trip_events
where user_id = $user_id and app_id = $app_id and trip_id = $trip_id
order by started_at, event_index
