-- grain: one row per score of one app kept in a published slot (every user, interval and
--        evaluation date: the history): the serving pack's score section. The JSON array holds
--        exactly the columns and formatting of models/serving/api_safety_score.sql and
--        models/serving/api_safety_score_history.sql, in their order, in the app's zone as of this publish.
-- reads: safety_scores
-- params: $app_id VARCHAR, $zone VARCHAR, $buckets INTEGER, $bucket INTEGER (one build step's
--         users, as in models/serving/pack_trips.sql), $since BIGINT (only the scores written after that
--         version, for a delta layer; -1: all)
-- Each user's scores by interval, then oldest first: one interval's history is one contiguous read,
-- and the order the layers merge in (src/serving/visible-rows.ts).
select
    user_id,
    (evaluation_date - date '1970-01-01')::double as sort_key,
    interval_days::double as trip_id,
    -- an array in SCORE_FIELDS order (src/serving/format.ts): a year of history is 180 of these
    -- per driver, and an object's repeated keys were most of each payload's bytes
    json_array(
        strftime(evaluation_date, '%Y-%m-%d'),
        strftime(timezone($zone, evaluated_at), '%Y-%m-%d %H:%M:%S'),
        strftime(window_start_local, '%Y-%m-%d %H:%M:%S'),
        strftime(window_end_local, '%Y-%m-%d %H:%M:%S'),
        safety_score, count_trips, distracted_driving, evening_rush_hour, acclong_abs_1,
        weekday_driving, low_speed, events_per_100km, percentile, model_version,
        multiplier_distracted_driving, multiplier_evening_rush_hour, multiplier_acclong_abs_1,
        multiplier_weekday_driving, multiplier_low_speed, multiplier_events,
        contribution_distracted_driving, contribution_evening_rush_hour, contribution_acclong_abs_1,
        contribution_weekday_driving, contribution_low_speed, contribution_events
    )::varchar as payload,
    '' as extra
from safety_scores
where app_id = $app_id and user_id % $buckets = $bucket and version > $since
order by user_id, interval_days, evaluation_date
