-- grain: one row per evaluation date of one user's scores for one interval, oldest first, from
--        $start_date to $end_date (both inclusive, app zone) and never after today
-- params: $app_id, $user_id BIGINT, $interval INTEGER, $start_date DATE, $end_date DATE,
--         $today DATE, $zone VARCHAR
-- The columns and formatting equal models/serving/api_safety_score.sql's (and models/serving/pack_scores.sql's payload).
select
    strftime(evaluation_date, '%Y-%m-%d') as evaluation_date,
    strftime(timezone($zone, evaluated_at), '%Y-%m-%d %H:%M:%S') as evaluation_time,
    strftime(window_start_local, '%Y-%m-%d %H:%M:%S') as start_time,
    strftime(window_end_local, '%Y-%m-%d %H:%M:%S') as end_time,
    safety_score, count_trips, distracted_driving, evening_rush_hour, acclong_abs_1,
    weekday_driving, low_speed, events_per_100km, percentile, model_version,
    multiplier_distracted_driving, multiplier_evening_rush_hour, multiplier_acclong_abs_1,
    multiplier_weekday_driving, multiplier_low_speed, multiplier_events,
    contribution_distracted_driving, contribution_evening_rush_hour, contribution_acclong_abs_1,
    contribution_weekday_driving, contribution_low_speed, contribution_events
from safety_scores
where user_id = $user_id and app_id = $app_id and interval_days = $interval
    and evaluation_date between $start_date::date and least($end_date::date, $today::date)
order by evaluation_date
