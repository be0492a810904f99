-- grain: one row per delivered point of a loadable record
-- reads: int_loadable_records
-- Marks each point with the reason it is dropped (decisions 3), first match wins; NULL keeps it.
-- Of points sharing a time, the first delivered is kept.
with delivered as (
    select
        app_id,
        trip_id,
        started_at,
        ended_at,
        unnest(points) as p,
        generate_subscripts(points, 1) as point_index
    from int_loadable_records
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

final as (
    select
        app_id,
        trip_id,
        point_index,
        t,
        lat,
        lng,
        speed,
        case
            when drop_reason is null
                and row_number() over (partition by app_id, trip_id, drop_reason is null, t order by point_index) > 1
                then 'duplicate_time'
            else drop_reason
        end as drop_reason
    from first_reason
)

select * from final
