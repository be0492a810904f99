-- grain: one row: what one score run (sql/ops/score/replace_scores.sql or insert_new_date.sql) scored and changed
-- reads: score_runs, safety_scores, safety_scores_removed
-- params: $app_id VARCHAR, $version BIGINT (the run's)
select
    (select coalesce(max(count_users), 0) from score_runs where version = $version and app_id = $app_id) as users,
    (select count(*) from safety_scores where version = $version and app_id = $app_id) as written,
    (select count(*) from safety_scores_removed where version = $version and app_id = $app_id) as removed
