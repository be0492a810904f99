-- grain: one row per delivered point of a loadable record, keyed by the record's line_no, with the
--        reason its value alone drops it (docs/decisions.md, Trip records (load)), first match wins; NULL when it is valid
-- reads: stg_trip_records (the point lists), int_loadable_records
-- The lists are unnested where they lie and points carry only their record's line_no: a join that
-- carried the lists, or keys of text, would hash every point of the file at once, which a large
-- Parquet file in one row group cannot do within the memory limit. A view for a file of up to
-- DRIVING_LOAD_POINTS_PER_PART points; a table, filled as the file streams by, for a larger one.
with records as (
    -- the record's times, parsed once per record as int_trip_records parses them: an expression
    -- beside an unnest is evaluated once per point
    select
        line_no,
        parse_json_instant(start_time_json) - interval 60 second as earliest,
        parse_json_instant(end_time_json) + interval 60 second as latest,
        points
    from stg_trip_records
    where line_no in (select line_no from int_loadable_records)
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
)

select * from checked
