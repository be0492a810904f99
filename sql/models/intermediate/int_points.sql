-- grain: one row per delivered point of a loadable record, keyed by the record's line_no
-- reads: int_point_values (each delivered point, typed and judged by its value)
-- params: $first_line, $last_line BIGINT: the part of the file derived (src/load/stage-file.ts
--         derives a large file a part at a time, so the window's memory is bounded)
-- Marks each point with the reason it is dropped (docs/decisions.md, Trip records (load)), first match wins; NULL keeps it:
-- the value checks, then a repeated time (of points sharing a time, the first delivered is kept),
-- then position spikes (docs/decisions.md, Trip records (load)): over the points left in time order, a point
-- whose speed from its predecessor and to its successor both exceed 250 km/h. One pass: every
-- point is judged against its neighbours as they were before any spike was removed, so the first
-- and last points are never spikes. A point left carries its successor (next_*), so
-- int_point_intervals sorts again only the trips that lost a spike.
-- One window does it all, the valid points of a record first, by time then delivery: exact for
-- every record without a repeated time, which is nearly all of them. Records with one are judged
-- again by int_points_repeated.sql, where the repeats are dropped before neighbours are taken.
with checked as (
    select *
    from int_point_values
    where line_no between $first_line and $last_line
),

neighbours as (
    select
        *,
        lag(t) over w as prev_t,
        lag(lat) over w as prev_lat,
        lag(lng) over w as prev_lng,
        -- the row after a valid point is its successor only while that is valid too
        case when lead(value_reason) over w is null then lead(t) over w end as next_t,
        lead(lat) over w as next_lat,
        lead(lng) over w as next_lng,
        lead(speed) over w as next_speed
    from checked
    window w as (partition by line_no order by value_reason is not null, t, point_index)
)

select
    line_no,
    point_index,
    t,
    lat,
    lng,
    speed,
    coalesce(
        value_reason,
        case when prev_t = t then 'duplicate_time' end,
        case when is_position_spike(prev_t, prev_lat, prev_lng, t, lat, lng, next_t, next_lat, next_lng) then 'position_spike' end
    ) as drop_reason,
    -- the successor among the points left (spikes included), for int_point_intervals
    case when value_reason is null then next_t end as next_t,
    case when value_reason is null and next_t is not null then next_lat end as next_lat,
    case when value_reason is null and next_t is not null then next_lng end as next_lng,
    case when value_reason is null and next_t is not null then next_speed end as next_speed
from neighbours
