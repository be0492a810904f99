-- Replaces one app's scores for one evaluation date (re-running a date recomputes it).
-- params: $app_id VARCHAR, $as_of DATE, $evaluated_at TIMESTAMPTZ, $version BIGINT
delete from safety_scores where app_id = $app_id and evaluation_date = $as_of::date;

delete from score_runs where app_id = $app_id and evaluation_date = $as_of::date;

insert into score_runs
select $app_id, $as_of::date, $evaluated_at, count(distinct user_id), safety_score_model_version(), $version
from scored_today;

insert into safety_scores by name
select *, $version as version from scored_today;
