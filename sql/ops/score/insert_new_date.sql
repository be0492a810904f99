-- A date the app has no score of yet (the nightly run's usual case): nothing to compare with and
-- nothing to remove, so the run's rows go into safety_scores as sql/ops/score/replace_scores.sql would
-- insert them, without the copy in scored_today and the comparison, which would only cost time
-- when there is nothing to compare with.
-- The rows come from the insert that precedes this (src/score/score-date.ts); this records the run.
-- params: $app_id VARCHAR, $as_of DATE, $evaluated_at TIMESTAMPTZ, $version BIGINT

-- a run of this date that scored nobody left its row, and no score
delete from score_runs where app_id = $app_id and evaluation_date = $as_of::date;

insert into score_runs
select $app_id, $as_of::date, $evaluated_at, count(distinct user_id), safety_score_model_version(), $version
from safety_scores
where app_id = $app_id and version = $version;
