-- grain: one row per app, user and local day in scope
-- reads: trips, scope_user_days (app_id, user_id, trip_date): the user-days to (re)compute
-- params: $version BIGINT
-- Sums of the day's normal trips (docs/decisions.md, Statistics and scores). A day in scope whose trips are gone or abnormal
-- gets a zero row, so the publish overwrites what it showed before.
with normal_trips as (
    select t.*
    from trips as t
    semi join scope_user_days as s
        on s.app_id = t.app_id and s.user_id = t.user_id and s.trip_date = t.trip_date
    where t.is_normal
),

per_day as (
    select
        app_id,
        user_id,
        trip_date,
        count(*) as count_trips,
        sum(mileage_m) as mileage_m,
        sum(duration_s) as duration_s,
        sum(count_events) as count_events,
        max(max_speed_kmh) as max_speed_kmh,
        sum(score * mileage_m) as score_x_mileage,
        sum(score) as score_sum
    from normal_trips
    group by app_id, user_id, trip_date
),

final as (
    select
        s.app_id,
        s.user_id,
        s.trip_date as stat_date,
        coalesce(d.count_trips, 0)::integer as count_trips,
        coalesce(d.mileage_m, 0)::bigint as mileage_m,
        coalesce(d.duration_s, 0)::bigint as duration_s,
        coalesce(d.count_events, 0)::bigint as count_events,
        coalesce(d.max_speed_kmh, 0) as max_speed_kmh,
        coalesce(d.score_x_mileage, 0) as score_x_mileage,
        coalesce(d.score_sum, 0) as score_sum,
        $version as version
    from scope_user_days as s
    left join per_day as d
        on d.app_id = s.app_id and d.user_id = s.user_id and d.trip_date = s.trip_date
)

select * from final
