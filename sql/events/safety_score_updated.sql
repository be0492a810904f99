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

per_user as (
    select
        s.app_id, s.user_id, any_value(s.org_user_id) as org_user_id, s.evaluation_date,
        json_group_object(s.interval_days::varchar, json_object('safetyScore', round(s.safety_score, 2), 'tripCount', s.count_trips)) as intervals,
        md5(string_agg(
            concat_ws('|', s.interval_days, round(s.safety_score, 6), s.count_trips, round(s.distracted_driving, 6),
                round(s.evening_rush_hour, 6), round(s.acclong_abs_1, 6), round(s.weekday_driving, 6), round(s.low_speed, 6)),
            ';' order by s.interval_days
        )) as fingerprint
    from safety_scores as s
    semi join runs as r on r.app_id = s.app_id and r.evaluation_date = s.evaluation_date
    group by s.app_id, s.user_id, s.evaluation_date
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
    json_object('orgUserId', org_user_id, 'userId', user_id, 'evaluationDate', evaluation_date::varchar, 'intervals', intervals) as data,
    user_id,
    evaluation_date,
    fingerprint,
    generation
from changed
order by app_id, user_id, evaluation_date
