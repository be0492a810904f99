-- grain: one row: what the day files hold (bad-source trips go to bad-records.ndjson only)
-- params: none (reads gen_trips, gen_points, gen_events)
with main_trips as (
    select trip_no, abnormal_kind from gen_trips where not is_bad_source
)

select
    (select count(*) from main_trips) as trips,
    (select count(*) from gen_points join main_trips using (trip_no) where not in_gap) as points,
    (select count(*) from gen_events join main_trips using (trip_no)) as events,
    (select count(*) from main_trips where abnormal_kind is not null) as abnormal_trips
