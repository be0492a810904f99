-- grain: the newest score of one user for one interval evaluated on or before today (app zone)
-- params: $app_id, $user_id BIGINT, $interval INTEGER, $today DATE, $zone VARCHAR
select
    strftime(timezone($zone, evaluated_at), '%Y-%m-%d %H:%M:%S') as evaluation_time,
    strftime(window_start_local, '%Y-%m-%d %H:%M:%S') as start_time,
    strftime(window_end_local, '%Y-%m-%d %H:%M:%S') as end_time,
    safety_score, count_trips, distracted_driving, evening_rush_hour, acclong_abs_1,
    weekday_driving, low_speed
from safety_scores
where user_id = $user_id and app_id = $app_id and interval_days = $interval
    and evaluation_date <= $today::date
order by evaluation_date desc
limit 1
