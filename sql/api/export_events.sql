-- grain: one row per event of one batch of the bulk export's trips, by trip, then in served order
-- params: $app_id VARCHAR, $zone VARCHAR, $trip_ids VARCHAR[] (the batch's trips; trip ids are
--         unique within the app)
-- Rows, not a list per trip: `list(... order by ...)` sorts each trip's group on its own, which
-- took most of a batch's time (51 of 70 s for 5,000 trips and 41,000 events at 1 M trips); one
-- sort of the batch's rows costs little, and the caller cuts them per trip.
select
    e.trip_id, e.type, e.description, e.start_lat, e.start_lng, e.end_lat, e.end_lng,
    strftime(timezone($zone, e.started_at), '%Y-%m-%d %H:%M:%S') as start_time,
    strftime(timezone($zone, e.ended_at), '%Y-%m-%d %H:%M:%S') as end_time
from trip_events as e
semi join (select unnest($trip_ids::varchar[]) as trip_id) as b on e.trip_id = b.trip_id
where e.app_id = $app_id
order by e.trip_id, e.started_at, e.event_index
