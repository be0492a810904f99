-- check: shares lie in [0, 1], scores in [0, 100], counts and distances are not negative.
-- changes: safety_scores, trips
-- params: $since BIGINT
select 'safety_scores' as model, app_id, user_id::varchar as key, 'share or score out of range' as problem
from safety_scores
where version > $since
    and not (distracted_driving between 0 and 1 and evening_rush_hour between 0 and 1
        and acclong_abs_1 between 0 and 1 and weekday_driving between 0 and 1
        and low_speed between 0 and 1 and safety_score between 0 and 100
        and events_per_100km >= 0 and count_trips > 0)
union all
select 'trips', app_id, trip_id, 'score, distance or duration out of range'
from trips
where version > $since
    and not (score between 0 and 100 and mileage_m >= 0 and energy_g >= 0 and count_events >= 0
        and max_speed_kmh >= 0 and avg_speed_kmh >= 0)
union all
select 'trips', app_id, trip_id, 'status and abnormal_reason disagree'
from trips
where version > $since
    and not ((status = 'normal' and abnormal_reason = '' and is_normal)
        or (status = 'abnormal' and abnormal_reason <> '' and not is_normal))
