-- Safety score model, version safety-score/1 (docs/models.md).
-- Same form as Tesla's published Safety Score: factors map to a predicted collision frequency
--   PCF = 0.682 * 20^distracted * 1.5^eveningRush * 4^acclongAbs1 * 1.2^weekday * 1.5^lowSpeed * 1.01^eventsPer100km
-- and the score is clamp(115.38 - 22.3 * PCF, 0, 100). Every base is > 1, so the score falls
-- whenever a risk factor rises and the others stay. The bases live only here: one macro each
-- gives a factor's log-multiplier, which both the PCF and the contributions use.
create or replace temp macro safety_score_model_version() as 'safety-score/1';

create or replace temp macro ss_log_distracted(share) as share * ln(20.0);
create or replace temp macro ss_log_evening_rush(share) as share * ln(1.5);
create or replace temp macro ss_log_acclong(share) as share * ln(4.0);
create or replace temp macro ss_log_weekday(share) as share * ln(1.2);
create or replace temp macro ss_log_low_speed(share) as share * ln(1.5);
create or replace temp macro ss_log_events(per_100km) as per_100km * ln(1.01);

create or replace temp macro ss_pcf(distracted, rush, acc, weekday, low_speed, events_per_100km) as
    0.682 * exp(ss_log_distracted(distracted) + ss_log_evening_rush(rush) + ss_log_acclong(acc)
        + ss_log_weekday(weekday) + ss_log_low_speed(low_speed) + ss_log_events(events_per_100km));

create or replace temp macro ss_score(pcf) as greatest(0.0, least(100.0, 115.38 - 22.3 * pcf));

-- A factor's multiplier of the PCF: its base to the power of its value (exp of its log-multiplier).
create or replace temp macro ss_multiplier(log_multiplier) as exp(log_multiplier);

-- The score of a set of inputs, clamped as the model does (the one formula the score and the
-- contributions share).
create or replace temp macro ss_score_of(distracted, rush, acc, weekday, low_speed, events_per_100km) as
    ss_score(ss_pcf(distracted, rush, acc, weekday, low_speed, events_per_100km));

-- Points of score a factor cost (docs/decisions.md, Statistics and scores): the score with that
-- factor's value set to 0 and every other input unchanged, minus the actual score, both clamped,
-- rounded to 2 places. Never negative (every base exceeds 1); the six need not add up to
-- 100 - score, because the clamp at 0 and the product's curvature are not shared out.
create or replace temp macro ss_contribution(score_without_factor, score) as
    round(score_without_factor - score, 2);
