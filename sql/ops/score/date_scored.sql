-- Whether the app has scores of the date already (a date scored again): sql/ops/score/replace_scores.sql
-- compares with them; else sql/ops/score/insert_new_date.sql records a first run.
-- params: $app_id VARCHAR, $as_of DATE
select exists (
    select 1 from safety_scores where app_id = $app_id and evaluation_date = $as_of::date
) as scored
