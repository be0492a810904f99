-- grain: one row per kept point, paired with the next kept point of its trip (in time order)
-- reads: int_points
-- dt is in seconds; an interval is a driving interval when 0 < dt <= 10 (decisions 4). An interval
-- covered faster than 250 km/h is implausible (decisions 3, rule speed_implausible); position spikes
-- are already dropped, so this judges the points left.
with kept as (
    select app_id, trip_id, t, lat, lng, speed
    from int_points
    where drop_reason is null
),

paired as (
    select
        app_id,
        trip_id,
        t,
        lat,
        lng,
        speed,
        lead(t) over w as next_t,
        lead(lat) over w as next_lat,
        lead(lng) over w as next_lng,
        lead(speed) over w as next_speed
    from kept
    window w as (partition by app_id, trip_id order by t)
)

select
    *,
    epoch(next_t) - epoch(t) as dt,
    haversine_m(lat, lng, next_lat, next_lng) as distance_m,
    next_t is not null and epoch(next_t) - epoch(t) > 0 and epoch(next_t) - epoch(t) <= 10 as is_driving,
    coalesce(faster_than_plausible(distance_m, dt), false) as is_implausible
from paired
