-- grain: one row: what one score run (sql/score/replace_scores.sql) scored and changed
-- reads: scored_today, safety_scores, safety_scores_removed
-- params: $app_id VARCHAR, $version BIGINT (the run's)
select
    (select count(distinct user_id) from scored_today) as users,
    (select count(*) from safety_scores where version = $version and app_id = $app_id) as written,
    (select count(*) from safety_scores_removed where version = $version and app_id = $app_id) as removed
