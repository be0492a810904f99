-- A moved driver's rows of the source warehouse (src/cells/move-package.ts), as temp tables the
-- package's Parquet files are written from: every table keyed by app and user, and what the
-- webhook events announced of them (so the target announces nothing again).
-- params: $app_id, $user_id
create or replace temp table move_trips as
select * from trips where app_id = $app_id and user_id = $user_id;

create or replace temp table move_trip_events as
select * from trip_events where app_id = $app_id and user_id = $user_id;

create or replace temp table move_stats_daily as
select * from stats_daily where app_id = $app_id and user_id = $user_id;

create or replace temp table move_safety_scores as
select * from safety_scores where app_id = $app_id and user_id = $user_id;

create or replace temp table move_announced_trips as
select a.* from announced_trips as a semi join move_trips as t on t.app_id = a.app_id and t.trip_id = a.trip_id;

create or replace temp table move_announced_scores as
select * from announced_scores where app_id = $app_id and user_id = $user_id;

create or replace temp table move_points (
    app_id varchar, trip_id varchar, t timestamptz, lat double, lng double, speed double,
    trip_date date, file_key varchar
);
