-- grain: one row per loadable trip whose end is after its start
-- reads: int_loadable_records (with the app's time_zone)
-- Seconds of [start, end) inside 17:00-20:00 local time on every local day the trip touches, and
-- on local Monday to Friday (docs/decisions.md, Statistics and scores). Local bounds become instants through the zone, so a DST
-- day is 23 or 25 hours long and no hour is assumed to be 3600 s of wall clock.
with trips as (
    select app_id, trip_id, started_at, ended_at, time_zone
    from int_loadable_records
    where ended_at > started_at
),

days as (
    select
        app_id,
        trip_id,
        started_at,
        ended_at,
        time_zone,
        unnest(generate_series(
            timezone(time_zone, started_at)::date::timestamp,
            -- at most a year of days: a record claiming to last centuries must not stall the load
            least(timezone(time_zone, ended_at)::date, timezone(time_zone, started_at)::date + 366)::timestamp,
            interval 1 day
        )) as local_day
    from trips
),

bounds as (
    select
        app_id,
        trip_id,
        started_at,
        ended_at,
        isodow(local_day) <= 5 as is_weekday,
        timezone(time_zone, local_day) as day_from,
        timezone(time_zone, local_day + interval 1 day) as day_to,
        timezone(time_zone, local_day + interval 17 hour) as rush_from,
        timezone(time_zone, local_day + interval 20 hour) as rush_to
    from days
)

select
    app_id,
    trip_id,
    sum(overlap_seconds(started_at, ended_at, rush_from, rush_to)) as evening_rush_seconds,
    sum(case when is_weekday then overlap_seconds(started_at, ended_at, day_from, day_to) else 0 end)
        as weekday_seconds
from bounds
group by app_id, trip_id
