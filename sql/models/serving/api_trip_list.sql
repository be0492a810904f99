-- grain: one row per trip of one user, newest first (docs/decisions.md, API), one page plus one row
-- params: $app_id, $user_id BIGINT, $zone VARCHAR, $from TIMESTAMPTZ (inclusive), $to TIMESTAMPTZ
--         (exclusive) bounds of the start time, $after_us BIGINT, $after_trip VARCHAR (keyset: the
--         last row of the previous page), $limit INTEGER
select
    trip_id, device_id, status, count_events, score, energy_g, mileage_m, duration_s,
    strftime(timezone($zone, started_at), '%Y-%m-%d %H:%M:%S') as start_time,
    strftime(timezone($zone, ended_at), '%Y-%m-%d %H:%M:%S') as end_time,
    epoch_us(started_at)::varchar as started_us,
    start_lat, start_lng, end_lat, end_lng, start_poi, end_poi
from trips
where user_id = $user_id
    and app_id = $app_id
    and started_at >= $from::timestamptz and started_at < $to::timestamptz
    and (epoch_us(started_at) < $after_us or (epoch_us(started_at) = $after_us and trip_id < $after_trip))
order by started_at desc, trip_id desc
limit $limit
