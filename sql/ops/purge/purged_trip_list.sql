-- The trips of the users being purged (purged_trips.sql), for their points and route files.
-- grain: one row per trip
-- reads: purged_trips (temp)
select app_id, user_id, trip_id, trip_date from purged_trips
