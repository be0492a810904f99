-- grain: one safety_score.updated event per app, user and evaluation date scored by a run whose
--        values differ from those last announced for that user and date (docs/decisions.md, Webhooks (delivery))
-- reads: safety_scores, score_runs, announced_scores
-- params: $since BIGINT, $version BIGINT (score runs published in (since, version])
-- The fingerprint covers what the event carries (each interval's rounded safetyScore and
-- tripCount) and the factors the API answers with, rounded to 6 places so that the last bits of a
-- recomputed sum never count as a change. The id derives from app, user, date, fingerprint and the
-- announcement's generation (1 for the first): a job that dies after writing the events file
-- repeats the same ids, and values that change back (A, B, A) still get a new id.
with runs as (
    select distinct app_id, evaluation_date from score_runs where version > $since and version <= $version
),

-- the user's two intervals side by side (numbers, not text: a row a user rather than two, and no
-- strings through the aggregate), then each interval's part of the event and of the fingerprint:
-- the fingerprint is the 30-day part, ';', the 90-day part (either alone when the user has only
-- that one), as an ordered string_agg gave it
per_user as (
    select
        s.app_id, s.user_id, any_value(s.org_user_id) as org_user_id, s.evaluation_date,
        bool_or(s.interval_days = 30) as has_30,
        any_value(s.safety_score) filter (where s.interval_days = 30) as score_30,
        any_value(s.count_trips) filter (where s.interval_days = 30) as trips_30,
        any_value(s.distracted_driving) filter (where s.interval_days = 30) as distracted_30,
        any_value(s.evening_rush_hour) filter (where s.interval_days = 30) as rush_30,
        any_value(s.acclong_abs_1) filter (where s.interval_days = 30) as acc_30,
        any_value(s.weekday_driving) filter (where s.interval_days = 30) as weekday_30,
        any_value(s.low_speed) filter (where s.interval_days = 30) as low_speed_30,
        bool_or(s.interval_days = 90) as has_90,
        any_value(s.safety_score) filter (where s.interval_days = 90) as score_90,
        any_value(s.count_trips) filter (where s.interval_days = 90) as trips_90,
        any_value(s.distracted_driving) filter (where s.interval_days = 90) as distracted_90,
        any_value(s.evening_rush_hour) filter (where s.interval_days = 90) as rush_90,
        any_value(s.acclong_abs_1) filter (where s.interval_days = 90) as acc_90,
        any_value(s.weekday_driving) filter (where s.interval_days = 90) as weekday_90,
        any_value(s.low_speed) filter (where s.interval_days = 90) as low_speed_90
    from safety_scores as s
    semi join runs as r on r.app_id = s.app_id and r.evaluation_date = s.evaluation_date
    group by s.app_id, s.user_id, s.evaluation_date
),

parts as (
    select
        app_id, user_id, org_user_id, evaluation_date,
        if(has_30, json_object('safetyScore', js_number(round(score_30, 2)), 'tripCount', trips_30), null) as json_30,
        if(has_90, json_object('safetyScore', js_number(round(score_90, 2)), 'tripCount', trips_90), null) as json_90,
        md5(concat_ws(';',
            if(has_30, concat_ws('|', 30, round(score_30, 6), trips_30, round(distracted_30, 6), round(rush_30, 6),
                round(acc_30, 6), round(weekday_30, 6), round(low_speed_30, 6)), null),
            if(has_90, concat_ws('|', 90, round(score_90, 6), trips_90, round(distracted_90, 6), round(rush_90, 6),
                round(acc_90, 6), round(weekday_90, 6), round(low_speed_90, 6)), null))) as fingerprint
    from per_user
),

changed as (
    select p.*, coalesce(a.generation, 0) + 1 as generation
    from parts as p
    left join announced_scores as a
        on a.app_id = p.app_id and a.user_id = p.user_id and a.evaluation_date = p.evaluation_date
    where a.fingerprint is distinct from p.fingerprint
)

select
    'evt_' || md5('safety_score.updated|' || app_id || '|' || user_id || '|' || evaluation_date || '|' || generation || '|' || fingerprint) as id,
    'safety_score.updated' as type,
    app_id,
    json_object('orgUserId', org_user_id, 'userId', user_id, 'evaluationDate', evaluation_date::varchar, 'intervals',
        case
            when json_90 is null then json_object('30', json_30)
            when json_30 is null then json_object('90', json_90)
            else json_object('30', json_30, '90', json_90)
        end) as data,
    user_id,
    evaluation_date,
    fingerprint,
    generation
from changed
order by app_id, user_id, evaluation_date
