-- grain: one safety_score.updated event per app, user and evaluation date scored by a run
-- reads: safety_scores, score_runs
-- params: $since BIGINT, $version BIGINT (score runs published in (since, version])
with runs as (
    select distinct app_id, evaluation_date from score_runs where version > $since and version <= $version
),

per_user as (
    select
        s.app_id, s.user_id, any_value(s.org_user_id) as org_user_id, s.evaluation_date,
        max(s.evaluated_at) as evaluated_at,
        json_group_object(s.interval_days::varchar, json_object('safetyScore', round(s.safety_score, 2), 'tripCount', s.count_trips)) as intervals
    from safety_scores as s
    semi join runs as r on r.app_id = s.app_id and r.evaluation_date = s.evaluation_date
    group by s.app_id, s.user_id, s.evaluation_date
)

select
    'evt_' || md5('safety_score.updated|' || app_id || '|' || user_id || '|' || evaluation_date || '|' || epoch_us(evaluated_at)) as id,
    'safety_score.updated' as type,
    app_id,
    json_object('orgUserId', org_user_id, 'userId', user_id, 'evaluationDate', evaluation_date::varchar, 'intervals', intervals) as data
from per_user
order by app_id, user_id
