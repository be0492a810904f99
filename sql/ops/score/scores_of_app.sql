-- One app's safety scores of a date as safety_scores holds them, with the run's version. The model
-- (models/marts/safety_scores.sql) goes in for safety_scores: it stays a plain query, so analysts
-- run it unchanged on Parquet exports.
-- grain: one row per user per window (interval_days) of the date
-- params: $app_id VARCHAR, $version BIGINT, and the model's ($as_of DATE, $evaluated_at TIMESTAMPTZ)
select *, $version as version from ({{safety_scores}}) where app_id = $app_id
