-- An empty table of safety_scores' columns and types, for a run's rows of a date scored before:
-- replace_scores.sql compares and inserts them as they are.
-- writes: scored_today (temp)
create or replace temp table scored_today as select * from safety_scores limit 0
