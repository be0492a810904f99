-- The safety_score.updated events held in score_events (safety_score_updated.sql, made a temp
-- table so the record of what was announced reads the same rows), in the order they were written.
-- grain: one row per event
select id, type, app_id, data from score_events
