-- grain: one row per app, user and interval (30, 90) with at least one normal trip in the window
-- reads: trips, apps
-- params: $as_of DATE (the evaluation date D), $evaluated_at TIMESTAMPTZ
-- Window (docs/decisions.md, Statistics and scores): normal trips starting from local (D - interval) 00:00:00 up to, not
-- including, local D 00:00:00 in the app's zone. T is the trips' summed duration in seconds.
-- One pass over the trips of the longer window: the 30-day window is its last 30 days (both end at
-- local D 00:00), so a user's trips are summed in two parts (in the 30-day window, and before it);
-- the 30-day sums are the first part, the 90-day sums both. The user's latest trip is the same in
-- both windows when the shorter one has one.
-- The trips' seconds are doubles: they are summed as fixed-point decimals and turned into doubles
-- once both parts are added, so a sum, each share and score built on it are the same bits on every
-- run whatever order DuckDB's threads add a driver's trips in (a plain sum of doubles can differ in
-- the last bit between runs, and an unchanged score must compare equal to be left unwritten).
with bounds as (
    select
        app_id,
        time_zone,
        timezone(time_zone, ($as_of::date - 90)::timestamp) as start_90,
        timezone(time_zone, ($as_of::date - 30)::timestamp) as start_30,
        timezone(time_zone, $as_of::date::timestamp) as window_end
    from apps
),

-- each window's bounds once an app, joined to the drivers: a zone conversion (ICU) a driver's row
-- would be a cost that grows with the drivers for a value every driver of the app shares
windows as (
    select
        b.app_id,
        i.interval_days,
        timezone(b.time_zone, ($as_of::date - i.interval_days)::timestamp) as window_start,
        b.window_end,
        ($as_of::date - i.interval_days)::timestamp as window_start_local,
        $as_of::date::timestamp - interval 1 second as window_end_local
    from bounds as b
    cross join (select unnest([30, 90]) as interval_days) as i
),

-- ten sums a trip rather than twenty (each sum once over the 90 days, once again over the last 30
-- with zeros for the earlier trips): the sums are most of the scoring query's work
parts as (
    select
        t.app_id,
        t.user_id,
        t.started_at >= b.start_30 as in_30,
        arg_max(t.org_user_id, t.started_at) as org_user_id,
        max(t.started_at) as last_started_at,
        count(*) as n,
        sum(t.elapsed_seconds::decimal(18, 9)) as elapsed,
        sum(t.driving_seconds::decimal(18, 9)) as driving,
        sum(t.mileage_m) as mileage,
        sum(t.count_events) as events,
        sum(t.distracted_seconds::decimal(18, 9)) as distracted,
        sum(t.evening_rush_seconds::decimal(18, 9)) as rush,
        sum(t.acc_over_1_seconds::decimal(18, 9)) as acc,
        sum(t.weekday_seconds::decimal(18, 9)) as weekday,
        sum(t.low_speed_seconds::decimal(18, 9)) as low_speed
    from trips as t
    join bounds as b
        on t.app_id = b.app_id
        and t.started_at >= b.start_90
        and t.started_at < b.window_end
    where t.is_normal
    group by t.app_id, t.user_id, in_30
),

per_user as (
    select
        app_id,
        user_id,
        arg_max(org_user_id, last_started_at) as org_user_id,
        sum(n) as n_90,
        sum(elapsed)::double as elapsed_90,
        sum(driving)::double as driving_90,
        sum(mileage) as mileage_90,
        sum(events) as events_90,
        sum(distracted)::double as distracted_90,
        sum(rush)::double as rush_90,
        sum(acc)::double as acc_90,
        sum(weekday)::double as weekday_90,
        sum(low_speed)::double as low_speed_90,
        coalesce(sum(n) filter (where in_30), 0) as n_30,
        coalesce(sum(elapsed) filter (where in_30), 0)::double as elapsed_30,
        coalesce(sum(driving) filter (where in_30), 0)::double as driving_30,
        coalesce(sum(mileage) filter (where in_30), 0) as mileage_30,
        coalesce(sum(events) filter (where in_30), 0) as events_30,
        coalesce(sum(distracted) filter (where in_30), 0)::double as distracted_30,
        coalesce(sum(rush) filter (where in_30), 0)::double as rush_30,
        coalesce(sum(acc) filter (where in_30), 0)::double as acc_30,
        coalesce(sum(weekday) filter (where in_30), 0)::double as weekday_30,
        coalesce(sum(low_speed) filter (where in_30), 0)::double as low_speed_30
    from parts
    group by app_id, user_id
),

-- one row per window the user drove in: (the 90-day sums, or the 30-day ones)
windowed as (
    select
        p.app_id,
        p.user_id,
        p.org_user_id,
        i.interval_days,
        i.window_start,
        i.window_end,
        i.window_start_local,
        i.window_end_local,
        if(i.interval_days = 90, p.n_90, p.n_30) as n,
        if(i.interval_days = 90, p.elapsed_90, p.elapsed_30) as elapsed,
        if(i.interval_days = 90, p.driving_90, p.driving_30) as driving,
        if(i.interval_days = 90, p.mileage_90, p.mileage_30) as mileage,
        if(i.interval_days = 90, p.events_90, p.events_30) as events,
        if(i.interval_days = 90, p.distracted_90, p.distracted_30) as distracted,
        if(i.interval_days = 90, p.rush_90, p.rush_30) as rush,
        if(i.interval_days = 90, p.acc_90, p.acc_30) as acc,
        if(i.interval_days = 90, p.weekday_90, p.weekday_30) as weekday,
        if(i.interval_days = 90, p.low_speed_90, p.low_speed_30) as low_speed
    from per_user as p
    join windows as i on i.app_id = p.app_id
),

factors as (
    select
        app_id,
        user_id,
        interval_days,
        org_user_id,
        window_start,
        window_end,
        window_start_local,
        window_end_local,
        n::integer as count_trips,
        elapsed as total_seconds,
        mileage::bigint as mileage_m,
        events::bigint as count_events,
        share(distracted, elapsed) as distracted_driving,
        share(rush, elapsed) as evening_rush_hour,
        share(acc, driving) as acclong_abs_1,
        share(weekday, elapsed) as weekday_driving,
        share(low_speed, driving) as low_speed,
        share(events * 100.0, mileage / 1000.0) as events_per_100km
    from windowed
    where n > 0
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
-- percent_rank() is (rank - 1) / (drivers - 1), rank - 1 being the drivers with a lower stored
-- score: counted from each distinct score's drivers (at most 10,001 scores a partition) rather
-- than by sorting every driver's row (a sort that grows with the drivers), the same division
-- of the same counts.
score_counts as (
    select app_id, interval_days, count_trips >= 1 as has_trips, round(raw_score, 2) as safety_score, count(*) as drivers
    from scored
    group by all
),

score_ranks as (
    select
        app_id,
        interval_days,
        has_trips,
        safety_score,
        coalesce(sum(drivers) over (
            partition by app_id, interval_days, has_trips order by safety_score rows between unbounded preceding and 1 preceding
        ), 0) as below,
        sum(drivers) over (partition by app_id, interval_days, has_trips) as partition_drivers
    from score_counts
),

ranked as (
    select
        s.*,
        round(s.raw_score, 2) as safety_score,
        case
            when s.count_trips < 1 then null
            when r.partition_drivers = 1 then 100.0
            else round(100.0 * (r.below::double / (r.partition_drivers - 1)::double), 2)
        end as percentile
    from scored as s
    join score_ranks as r
        on r.app_id = s.app_id
        and r.interval_days = s.interval_days
        and r.has_trips = (s.count_trips >= 1)
        and r.safety_score is not distinct from round(s.raw_score, 2)
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
