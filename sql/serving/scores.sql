-- grain: one row per score kept in a published slot (per user and interval, the newest not after
--        today and any later ones): the serving pack's score section. The JSON holds exactly the
--        columns and formatting of api/safety_score.sql in the app's zone as of this publish.
-- reads: safety_scores, serving_zones (temp: app_id, time_zone)
-- params: $buckets INTEGER, $bucket INTEGER (one build step's users, as in serving/trips.sql)
select
    s.app_id,
    s.user_id,
    (s.evaluation_date - date '1970-01-01')::double as sort_key,
    s.interval_days::varchar as trip_id,
    to_json({
        'evaluation_time': strftime(timezone(z.time_zone, s.evaluated_at), '%Y-%m-%d %H:%M:%S'),
        'start_time': strftime(s.window_start_local, '%Y-%m-%d %H:%M:%S'),
        'end_time': strftime(s.window_end_local, '%Y-%m-%d %H:%M:%S'),
        'safety_score': s.safety_score, 'count_trips': s.count_trips,
        'distracted_driving': s.distracted_driving, 'evening_rush_hour': s.evening_rush_hour,
        'acclong_abs_1': s.acclong_abs_1, 'weekday_driving': s.weekday_driving, 'low_speed': s.low_speed
    })::varchar as payload,
    '' as extra
from safety_scores as s
join serving_zones as z on z.app_id = s.app_id
where s.user_id % $buckets = $bucket
order by s.app_id, s.user_id, s.evaluation_date desc, s.interval_days
