-- grain: one row per app, user and interval (30, 90) with at least one normal trip in the window
-- reads: trips, apps
-- params: $as_of DATE (the evaluation date D), $evaluated_at TIMESTAMPTZ
-- Window (docs/decisions.md, Statistics and scores): normal trips starting from local (D - interval) 00:00:00 up to, not
-- including, local D 00:00:00 in the app's zone. T is the trips' summed duration in seconds.
with windows as (
    select
        a.app_id,
        i.interval_days,
        ($as_of::date - i.interval_days)::timestamp as window_start_local,
        $as_of::date::timestamp - interval 1 second as window_end_local,
        timezone(a.time_zone, ($as_of::date - i.interval_days)::timestamp) as window_start,
        timezone(a.time_zone, $as_of::date::timestamp) as window_end
    from apps as a
    cross join (select unnest([30, 90]) as interval_days) as i
),

window_trips as (
    select w.interval_days, w.window_start, w.window_end, w.window_start_local, w.window_end_local, t.*
    from windows as w
    join trips as t
        on t.app_id = w.app_id
        and t.started_at >= w.window_start
        and t.started_at < w.window_end
    where t.is_normal
),

factors as (
    select
        app_id,
        user_id,
        interval_days,
        arg_max(org_user_id, started_at) as org_user_id,
        any_value(window_start) as window_start,
        any_value(window_end) as window_end,
        any_value(window_start_local) as window_start_local,
        any_value(window_end_local) as window_end_local,
        count(*)::integer as count_trips,
        sum(elapsed_seconds) as total_seconds,
        sum(mileage_m)::bigint as mileage_m,
        sum(count_events)::bigint as count_events,
        share(sum(distracted_seconds), sum(elapsed_seconds)) as distracted_driving,
        share(sum(evening_rush_seconds), sum(elapsed_seconds)) as evening_rush_hour,
        share(sum(acc_over_1_seconds), sum(driving_seconds)) as acclong_abs_1,
        share(sum(weekday_seconds), sum(elapsed_seconds)) as weekday_driving,
        share(sum(low_speed_seconds), sum(driving_seconds)) as low_speed,
        share(sum(count_events) * 100.0, sum(mileage_m) / 1000.0) as events_per_100km
    from window_trips
    group by app_id, user_id, interval_days
),

scored as (
    select
        *,
        ss_pcf(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km) as pcf,
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km) as raw_score,
        -- the score with one factor at 0, the others as they are (docs/decisions.md, Statistics and scores)
        ss_score_of(0, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km) as without_distracted,
        ss_score_of(distracted_driving, 0, acclong_abs_1, weekday_driving, low_speed, events_per_100km) as without_rush,
        ss_score_of(distracted_driving, evening_rush_hour, 0, weekday_driving, low_speed, events_per_100km) as without_acc,
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, 0, low_speed, events_per_100km) as without_weekday,
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, 0, events_per_100km) as without_low_speed,
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, 0) as without_events
    from factors
),

-- Percentile (docs/decisions.md, Statistics and scores): per app and interval (one evaluation date here), over the drivers
-- with at least one trip, by the stored (rounded) score, ties sharing the lowest rank; 100 alone.
-- Every row here has a trip (the grain); the condition keeps the definition explicit.
ranked as (
    select
        *,
        round(raw_score, 2) as safety_score,
        case
            when count_trips < 1 then null
            when count(*) over (partition by app_id, interval_days, count_trips >= 1) = 1 then 100.0
            else round(100.0 * percent_rank() over ranking, 2)
        end as percentile
    from scored
    window ranking as (partition by app_id, interval_days, count_trips >= 1 order by round(raw_score, 2))
),

final as (
    select
        app_id,
        user_id,
        org_user_id,
        $as_of::date as evaluation_date,
        interval_days,
        $evaluated_at::timestamptz as evaluated_at,
        window_start,
        window_end,
        window_start_local,
        window_end_local,
        count_trips,
        total_seconds,
        mileage_m,
        count_events,
        distracted_driving,
        evening_rush_hour,
        acclong_abs_1,
        weekday_driving,
        low_speed,
        events_per_100km,
        pcf,
        safety_score,
        percentile,
        ss_multiplier(ss_log_distracted(distracted_driving)) as multiplier_distracted_driving,
        ss_multiplier(ss_log_evening_rush(evening_rush_hour)) as multiplier_evening_rush_hour,
        ss_multiplier(ss_log_acclong(acclong_abs_1)) as multiplier_acclong_abs_1,
        ss_multiplier(ss_log_weekday(weekday_driving)) as multiplier_weekday_driving,
        ss_multiplier(ss_log_low_speed(low_speed)) as multiplier_low_speed,
        ss_multiplier(ss_log_events(events_per_100km)) as multiplier_events,
        ss_contribution(without_distracted, raw_score) as contribution_distracted_driving,
        ss_contribution(without_rush, raw_score) as contribution_evening_rush_hour,
        ss_contribution(without_acc, raw_score) as contribution_acclong_abs_1,
        ss_contribution(without_weekday, raw_score) as contribution_weekday_driving,
        ss_contribution(without_low_speed, raw_score) as contribution_low_speed,
        ss_contribution(without_events, raw_score) as contribution_events,
        safety_score_model_version() as model_version
    from ranked
)

select * from final
