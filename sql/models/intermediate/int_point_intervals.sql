-- grain: one row per kept point, paired with the next kept point of its trip (in time order)
-- reads: int_points
-- dt is in seconds; an interval is a driving interval when 0 < dt <= 10 (docs/decisions.md, Trip records (load)). An interval
-- covered faster than 250 km/h is implausible (docs/decisions.md, Trip records (load), rule speed_implausible); position spikes
-- are already dropped, so this judges the points left. Trips are keyed by their record's line_no.
-- The load creates it as a view: its one reader, int_trip_point_metrics, sums it as it streams.
-- kept is read twice and not materialised: scanning int_points twice costs less than a copy.
with kept as not materialized (
    select line_no, t, lat, lng, speed, next_t, next_lat, next_lng, next_speed
    from int_points
    where drop_reason is null
),

-- the few trips that lost a position spike: their kept points' successors are found again
spiked as (
    select distinct line_no
    from int_points
    where drop_reason = 'position_spike'
),

paired as (
    select k.*
    from kept as k
    anti join spiked as s on s.line_no = k.line_no
    union all
    select
        k.line_no,
        k.t,
        k.lat,
        k.lng,
        k.speed,
        lead(k.t) over w as next_t,
        lead(k.lat) over w as next_lat,
        lead(k.lng) over w as next_lng,
        lead(k.speed) over w as next_speed
    from kept as k
    semi join spiked as s on s.line_no = k.line_no
    window w as (partition by k.line_no order by k.t)
)

select
    *,
    seconds_between(t, next_t) as dt,
    haversine_m(lat, lng, next_lat, next_lng) as distance_m,
    next_t is not null and dt > 0 and dt <= 10 as is_driving,
    coalesce(faster_than_plausible(distance_m, dt), false) as is_implausible
from paired
