-- grain: one row per delivered point of a loadable record
-- reads: stg_trip_records (the point lists), int_loadable_records
-- Marks each point with the reason it is dropped (decisions 3), first match wins; NULL keeps it.
-- Of points sharing a time, the first delivered is kept. Then, over the points left in time order,
-- a point whose speed from its predecessor and to its successor both exceed 250 km/h is a
-- position_spike (decisions 3, "Plausibility"): one pass, every point judged against its neighbours
-- as they were before any spike was removed, so the first and last points are never spikes.
-- Kept points carry their successor (next_*) from that same pass: in a trip that lost no spike it
-- is the successor among the points left, so int_point_intervals need not sort those trips again.
with delivered as (
    select
        r.app_id,
        r.trip_id,
        r.started_at,
        r.ended_at,
        unnest(s.points) as p,
        generate_subscripts(s.points, 1) as point_index
    from int_loadable_records as r
    join stg_trip_records as s on s.line_no = r.line_no
),

typed as (
    select
        app_id,
        trip_id,
        point_index,
        parse_instant(p.t) as t,
        p.lat as lat,
        p.lng as lng,
        p.speed as speed,
        started_at,
        ended_at
    from delivered
),

first_reason as (
    select
        *,
        case
            when t is null or lat is null or lng is null or speed is null
                or not isfinite(lat) or not isfinite(lng) or not isfinite(speed) then 'non_finite'
            when abs(lat) > 90 or abs(lng) > 180 then 'invalid_position'
            when speed < 0 then 'negative_speed'
            when t < started_at - interval 60 second or t > ended_at + interval 60 second then 'time_out_of_range'
        end as drop_reason
    from typed
),

-- times delivered more than once in a trip, with the first delivery of each: a grouping (hashed)
-- instead of a window over every point, since repeated times are the exception
repeated_times as (
    select app_id, trip_id, t, min(point_index) as first_index
    from first_reason
    where drop_reason is null
    group by app_id, trip_id, t
    having count(*) > 1
),

checked as (
    select
        f.app_id,
        f.trip_id,
        f.point_index,
        f.t,
        f.lat,
        f.lng,
        f.speed,
        case
            when f.drop_reason is null and f.point_index > d.first_index then 'duplicate_time'
            else f.drop_reason
        end as drop_reason
    from first_reason as f
    left join repeated_times as d on d.app_id = f.app_id and d.trip_id = f.trip_id and d.t = f.t
),

neighbours as (
    select
        *,
        lag(t) over w as prev_t,
        lag(lat) over w as prev_lat,
        lag(lng) over w as prev_lng,
        lead(t) over w as next_t,
        lead(lat) over w as next_lat,
        lead(lng) over w as next_lng,
        lead(speed) over w as next_speed
    from checked
    where drop_reason is null
    window w as (partition by app_id, trip_id order by t)
),

spikes_judged as (
    select
        app_id,
        trip_id,
        point_index,
        t,
        lat,
        lng,
        speed,
        -- a missing neighbour gives NULL: the first and last points are kept
        case
            when coalesce(
                faster_than_plausible(haversine_m(prev_lat, prev_lng, lat, lng), epoch(t) - epoch(prev_t))
                and faster_than_plausible(haversine_m(lat, lng, next_lat, next_lng), epoch(next_t) - epoch(t)),
                false) then 'position_spike'
        end as drop_reason,
        next_t,
        next_lat,
        next_lng,
        next_speed
    from neighbours
),

final as (
    select * from spikes_judged
    union all
    select
        *,
        null::timestamptz as next_t,
        null::double as next_lat,
        null::double as next_lng,
        null::double as next_speed
    from checked
    where drop_reason is not null
)

select * from final
