-- grain: one row per score of one app kept in a published slot (per user and interval, the newest
--        not after today and any later ones): the serving pack's score section. The JSON holds
--        exactly the columns and formatting of api/safety_score.sql in the app's zone as of this
--        publish.
-- reads: safety_scores
-- params: $app_id VARCHAR, $zone VARCHAR, $buckets INTEGER, $bucket INTEGER (one build step's
--         users, as in serving/trips.sql)
select
    user_id,
    (evaluation_date - date '1970-01-01')::double as sort_key,
    interval_days::varchar as trip_id,
    to_json({
        'evaluation_time': strftime(timezone($zone, evaluated_at), '%Y-%m-%d %H:%M:%S'),
        'start_time': strftime(window_start_local, '%Y-%m-%d %H:%M:%S'),
        'end_time': strftime(window_end_local, '%Y-%m-%d %H:%M:%S'),
        'safety_score': safety_score, 'count_trips': count_trips,
        'distracted_driving': distracted_driving, 'evening_rush_hour': evening_rush_hour,
        'acclong_abs_1': acclong_abs_1, 'weekday_driving': weekday_driving, 'low_speed': low_speed
    })::varchar as payload,
    '' as extra
from safety_scores
where app_id = $app_id and user_id % $buckets = $bucket
order by user_id, evaluation_date desc, interval_days
