-- grain: one row per delivered point of a loadable record
-- reads: stg_trip_records (the point lists), int_loadable_records
-- Marks each point with the reason it is dropped (decisions 3), first match wins; NULL keeps it.
-- Of points sharing a time, the first delivered is kept.
-- The lists are unnested where they lie and the record's fields joined to the points after: a
-- join that carried the lists would hash every point of the file (it ran out of memory on a
-- Parquet file of 11 M points in one row group at a 1 GB limit).
with delivered as (
    select
        s.line_no,
        unnest(s.points) as p,
        generate_subscripts(s.points, 1) as point_index
    from stg_trip_records as s
    where s.line_no in (select line_no from int_loadable_records)
),

typed as (
    select
        d.line_no,
        r.app_id,
        r.trip_id,
        d.point_index,
        parse_instant(d.p.t) as t,
        -- NDJSON points arrive typed; a Parquet file's points keep their stored types
        d.p.lat::double as lat,
        d.p.lng::double as lng,
        d.p.speed::double as speed,
        r.started_at,
        r.ended_at
    from delivered as d
    join int_loadable_records as r on r.line_no = d.line_no
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
    select line_no, t, min(point_index) as first_index
    from first_reason
    where drop_reason is null
    group by line_no, t
    having count(*) > 1
),

final as (
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
    left join repeated_times as d on d.line_no = f.line_no and d.t = f.t
)

select * from final
