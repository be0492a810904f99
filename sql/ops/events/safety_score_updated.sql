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

-- each score row's part of the event and of the fingerprint, then the user's two intervals side
-- by side: the fingerprint is the 30-day part, ';', the 90-day part (either alone when the user has
-- only that one), as an ordered string_agg gave it, without an ordered aggregate per user
parts as (
    select
        s.app_id, s.user_id, s.org_user_id, s.evaluation_date, s.interval_days,
        json_object('safetyScore', js_number(round(s.safety_score, 2)), 'tripCount', s.count_trips) as interval_json,
        concat_ws('|', s.interval_days, round(s.safety_score, 6), s.count_trips, round(s.distracted_driving, 6),
            round(s.evening_rush_hour, 6), round(s.acclong_abs_1, 6), round(s.weekday_driving, 6), round(s.low_speed, 6)) as part
    from safety_scores as s
    semi join runs as r on r.app_id = s.app_id and r.evaluation_date = s.evaluation_date
),

per_user as (
    select
        app_id, user_id, any_value(org_user_id) as org_user_id, evaluation_date,
        any_value(interval_json) filter (where interval_days = 30) as json_30,
        any_value(interval_json) filter (where interval_days = 90) as json_90,
        md5(concat_ws(';', any_value(part) filter (where interval_days = 30), any_value(part) filter (where interval_days = 90))) as fingerprint
    from parts
    group by app_id, user_id, evaluation_date
),

changed as (
    select p.*, coalesce(a.generation, 0) + 1 as generation
    from per_user as p
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
