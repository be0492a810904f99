-- Replaces one app's scores for one evaluation date (re-running a date recomputes it), writing
-- only the rows whose values changed: a score the run gives again with the same values keeps its
-- row (its version and evaluation time: when those values were computed), so the publish copies
-- what the run changed, not the whole date. A score the run no longer gives is deleted and
-- recorded in safety_scores_removed for the slots.
-- reads: scored_today (sql/models/marts/safety_scores.sql for the app and date, with the run's version,
--        in the table's own column order: intersect below compares by position)
-- params: $app_id VARCHAR, $as_of DATE, $evaluated_at TIMESTAMPTZ, $version BIGINT

create or replace temp table scores_same as
select * exclude (evaluated_at, version)
from safety_scores
where app_id = $app_id and evaluation_date = $as_of::date
intersect
select * exclude (evaluated_at, version) from scored_today;

insert into safety_scores_removed
select s.app_id, s.user_id, s.interval_days, s.evaluation_date, $version
from safety_scores as s
anti join scored_today as r on r.user_id = s.user_id and r.interval_days = s.interval_days
where s.app_id = $app_id and s.evaluation_date = $as_of::date;

delete from safety_scores as s
where s.app_id = $app_id and s.evaluation_date = $as_of::date
    and not exists (
        select 1 from scores_same as k where k.user_id = s.user_id and k.interval_days = s.interval_days
    );

insert into safety_scores
select r.*
from scored_today as r
anti join scores_same as k on k.user_id = r.user_id and k.interval_days = r.interval_days;

delete from score_runs where app_id = $app_id and evaluation_date = $as_of::date;

insert into score_runs
select $app_id, $as_of::date, $evaluated_at, count(distinct user_id), safety_score_model_version(), $version
from scored_today;

drop table scores_same;
