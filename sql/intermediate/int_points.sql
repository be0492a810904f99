-- grain: one row per delivered point of a loadable record, keyed by the record's line_no
-- reads: stg_point_lists (the loadable records' point lists), int_loadable_records
-- params: $first_line, $last_line BIGINT: the part of the file derived (src/load/stage-file.ts
--         derives a large file a part at a time, so the window's memory is bounded)
-- Marks each point with the reason it is dropped (decisions 3), first match wins; NULL keeps it:
-- the value checks, then a repeated time (of points sharing a time, the first delivered is kept),
-- then position spikes (decisions 3, "Plausibility"): over the points left in time order, a point
-- whose speed from its predecessor and to its successor both exceed 250 km/h. One pass: every
-- point is judged against its neighbours as they were before any spike was removed, so the first
-- and last points are never spikes. A point left carries its successor (next_*), so
-- int_point_intervals sorts again only the trips that lost a spike.
-- One window does it all, the valid points of a record first, by time then delivery: exact for
-- every record without a repeated time, which is nearly all of them. Records with one are judged
-- again by int_points_repeated.sql, where the repeats are dropped before neighbours are taken.
-- The lists are unnested where they lie and points carry only their record's line_no: a join that
-- carried the lists, or keys of text, would hash every point of the file (an 11 M-point Parquet
-- file in one row group ran out of memory at a 1 GB limit that way).
with records as (
    -- the record's times, parsed once per record as int_trip_records parses them: an expression
    -- beside an unnest is evaluated once per point
    select
        line_no,
        parse_json_instant(start_time_json) - interval 60 second as earliest,
        parse_json_instant(end_time_json) + interval 60 second as latest,
        points
    from stg_point_lists
    where line_no in (select line_no from int_loadable_records)
        and line_no between $first_line and $last_line
),

delivered as (
    select
        line_no,
        earliest,
        latest,
        unnest(points) as p,
        generate_subscripts(points, 1) as point_index
    from records
),

checked as (
    select
        line_no,
        point_index,
        t,
        lat,
        lng,
        speed,
        case
            when t is null or lat is null or lng is null or speed is null
                or not isfinite(lat) or not isfinite(lng) or not isfinite(speed) then 'non_finite'
            when abs(lat) > 90 or abs(lng) > 180 then 'invalid_position'
            when speed < 0 then 'negative_speed'
            when t < earliest or t > latest then 'time_out_of_range'
        end as value_reason
    from (
        select
            line_no,
            point_index,
            parse_instant(p.t) as t,
            -- NDJSON points arrive typed; a Parquet file's points keep their stored types
            p.lat::double as lat,
            p.lng::double as lng,
            p.speed::double as speed,
            earliest,
            latest
        from delivered
    )
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
