-- What the API will serve of the demo app, read from the published slot.
-- grain: one row
-- reads: trips, safety_scores (a published slot)
-- params: $app VARCHAR
select
    (select count(*) from trips where app_id = $app) as trips,
    (select count(*) from trips where app_id = $app and is_normal) as normal_trips,
    (select count(distinct user_id) from trips where app_id = $app) as users,
    (select min(trip_date)::varchar from trips where app_id = $app) as first_day,
    (select max(trip_date)::varchar from trips where app_id = $app) as last_day,
    (select count(*) from safety_scores where app_id = $app) as scores,
    (select round(avg(safety_score), 2) from safety_scores where app_id = $app and interval_days = 30) as mean30
