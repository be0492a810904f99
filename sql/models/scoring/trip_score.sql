-- Trip score model, version trip-score/1 (docs/models.md explains the choice).
-- score = 100 * exp(-0.25 * risk / sqrt(max(km, 1))), risk = sum of the weights of the trip's events.
-- 100 with no events; the square root makes a long trip's few events weigh less per km without
-- ever letting distance erase them.
create or replace temp macro trip_score_model_version() as 'trip-score/1';

create or replace temp macro trip_event_weight(event_type) as
    case event_type
        when 'brake' then 1.0
        when 'throttle' then 0.8
        when 'corner_left' then 0.6
        when 'corner_right' then 0.6
        when 'speeding' then 1.0
        when 'phone_call' then 1.5
        when 'phone_usage' then 2.0
        when 'night_driving' then 0.3
        when 'tired_driving' then 1.2
        else 0.0
    end;

create or replace temp macro trip_score(risk, mileage_m) as
    round(100 * exp(-0.25 * coalesce(risk, 0) / sqrt(greatest(mileage_m / 1000.0, 1))), 2);
