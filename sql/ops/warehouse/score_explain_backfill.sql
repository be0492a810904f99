-- Fills the multipliers, contributions and percentiles of scores stored before they were kept,
-- from each row's stored factors with the model's macros (the same ones sql/models/marts/safety_scores.sql
-- uses, so the values equal a re-run of those dates), and gives the rows and their score runs a new
-- version so the next publish carries them to the slots and the serving pack.
-- params: $version BIGINT
create or replace temp table score_backfill_dates as
select distinct app_id, evaluation_date from safety_scores where multiplier_distracted_driving is null;

update safety_scores set
    multiplier_distracted_driving = ss_multiplier(ss_log_distracted(distracted_driving)),
    multiplier_evening_rush_hour = ss_multiplier(ss_log_evening_rush(evening_rush_hour)),
    multiplier_acclong_abs_1 = ss_multiplier(ss_log_acclong(acclong_abs_1)),
    multiplier_weekday_driving = ss_multiplier(ss_log_weekday(weekday_driving)),
    multiplier_low_speed = ss_multiplier(ss_log_low_speed(low_speed)),
    multiplier_events = ss_multiplier(ss_log_events(events_per_100km)),
    contribution_distracted_driving = ss_contribution(ss_score_of(0, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km),
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km)),
    contribution_evening_rush_hour = ss_contribution(ss_score_of(distracted_driving, 0, acclong_abs_1, weekday_driving, low_speed, events_per_100km),
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km)),
    contribution_acclong_abs_1 = ss_contribution(ss_score_of(distracted_driving, evening_rush_hour, 0, weekday_driving, low_speed, events_per_100km),
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km)),
    contribution_weekday_driving = ss_contribution(ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, 0, low_speed, events_per_100km),
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km)),
    contribution_low_speed = ss_contribution(ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, 0, events_per_100km),
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km)),
    contribution_events = ss_contribution(ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, 0),
        ss_score_of(distracted_driving, evening_rush_hour, acclong_abs_1, weekday_driving, low_speed, events_per_100km)),
    version = $version
where multiplier_distracted_driving is null;

-- ranked as sql/models/marts/safety_scores.sql ranks: per app, date and interval, by the stored score
update safety_scores as s set percentile = r.percentile
from (
    select
        t.app_id, t.user_id, t.interval_days, t.evaluation_date,
        case
            when t.count_trips < 1 then null
            when count(*) over (partition by t.app_id, t.evaluation_date, t.interval_days, t.count_trips >= 1) = 1 then 100.0
            else round(100.0 * percent_rank() over ranking, 2)
        end as percentile
    from safety_scores as t
    semi join score_backfill_dates as d on d.app_id = t.app_id and d.evaluation_date = t.evaluation_date
    window ranking as (partition by t.app_id, t.evaluation_date, t.interval_days, t.count_trips >= 1 order by t.safety_score)
) as r
where s.app_id = r.app_id and s.user_id = r.user_id and s.interval_days = r.interval_days and s.evaluation_date = r.evaluation_date;

update score_runs as r set version = $version
from score_backfill_dates as d
where r.app_id = d.app_id and r.evaluation_date = d.evaluation_date;

drop table score_backfill_dates;
