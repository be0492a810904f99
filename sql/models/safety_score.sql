-- Safety score model, version safety-score/1 (docs/models.md).
-- Same form as Tesla's published Safety Score: factors map to a predicted collision frequency
--   PCF = 0.682 * 20^distracted * 2^eveningRush * 8^acclongAbs1 * 1.2^weekday * 1.5^lowSpeed * 1.05^eventsPer100km
-- and the score is clamp(115.38 - 22.3 * PCF, 0, 100). Every base is > 1, so the score falls
-- whenever a risk factor rises and the others stay.
create or replace macro safety_score_model_version() as 'safety-score/1';

create or replace macro ss_pcf(distracted, rush, acc, weekday, low_speed, events_per_100km) as
    0.682 * pow(20.0, distracted) * pow(2.0, rush) * pow(8.0, acc)
          * pow(1.2, weekday) * pow(1.5, low_speed) * pow(1.05, events_per_100km);

create or replace macro ss_score(pcf) as greatest(0.0, least(100.0, 115.38 - 22.3 * pcf));

-- Points of score a factor cost: the score's loss from a perfect 100, split in proportion to each
-- factor's log-multiplier (the PCF is a product, so logs add).
create or replace macro ss_lost(log_multiplier, total_log, safety_score) as
    case when total_log <= 0 then 0.0 else (100.0 - safety_score) * log_multiplier / total_log end;
