-- grain: the one trip of one user with this id, or none
-- params: $app_id, $user_id BIGINT, $trip_id VARCHAR, $zone VARCHAR
select
    trip_id, device_id, status, abnormal_reason, os, score, energy_g, avg_speed_kmh, max_speed_kmh,
    mileage_m, duration_s, coordinate, is_auto_start, is_auto_end,
    strftime(timezone($zone, started_at), '%Y-%m-%d %H:%M:%S') as start_time,
    strftime(timezone($zone, ended_at), '%Y-%m-%d %H:%M:%S') as end_time,
    start_lat, start_lng, end_lat, end_lng, start_poi, end_poi
from trips
where user_id = $user_id and app_id = $app_id and trip_id = $trip_id
