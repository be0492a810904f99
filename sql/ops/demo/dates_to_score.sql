-- The demo app's first trip date and last scored date in the published slot: the dates to score
-- run from the day after the last scored one (the first trip's, before any score).
-- grain: one row
-- reads: trips, safety_scores (a published slot)
-- params: $app VARCHAR
select
    (select min(trip_date)::varchar from trips where app_id = $app) as first_day,
    (select max(evaluation_date)::varchar from safety_scores where app_id = $app) as last_scored
