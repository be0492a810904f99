-- The scores written since $since (with changed scores).
-- params: $since BIGINT

-- Every score is kept: the history route answers any evaluation date (docs/decisions.md, Statistics and scores).
-- A changed score of a date scored again was deleted above (replaced_scores) and comes back here.
insert into slot.safety_scores by name
select
    app_id, user_id, org_user_id, evaluation_date, interval_days, evaluated_at,
    window_start_local, window_end_local, count_trips, distracted_driving, evening_rush_hour,
    acclong_abs_1, weekday_driving, low_speed, events_per_100km, safety_score, percentile,
    multiplier_distracted_driving, multiplier_evening_rush_hour, multiplier_acclong_abs_1,
    multiplier_weekday_driving, multiplier_low_speed, multiplier_events,
    contribution_distracted_driving, contribution_evening_rush_hour, contribution_acclong_abs_1,
    contribution_weekday_driving, contribution_low_speed, contribution_events,
    model_version, version
from safety_scores
where version > $since;
