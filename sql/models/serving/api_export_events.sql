-- grain: one row per event of one batch of the bulk export's trips, in the order of $trip_ids, then
--        in served order; `trip_pos` is the trip's position in $trip_ids (1-based)
-- params: $app_id VARCHAR, $zone VARCHAR, $trip_ids VARCHAR[] (the batch's trips; trip ids are
--         unique within the app), $from TIMESTAMPTZ, $to TIMESTAMPTZ (inclusive bounds on the
--         events' start: the batch's first trip start to its last trip end; '-infinity' and
--         'infinity' for the trips whose events were not all found within them)
-- The range on `started_at` is what bounds a batch's work by the batch: the slot's events are
-- written in load order, so a range of times is a few row groups, and DuckDB skips the others by
-- their min/max (without it every batch would read all of the app's events, so a batch's cost
-- would grow with the history). An event's time is not checked against its trip's, so the range alone could miss an
-- event: the caller counts each trip's rows against its `count_events` (checked at publish:
-- checks/events_have_trips.sql) and asks again, unbounded, for the trips that fall short.
-- Rows, not a list per trip: `list(... order by ...)` sorts each trip's group on its own, a
-- separate sort per trip that costs far more than the rest of the batch; one sort of the batch's
-- rows costs little, and the caller cuts them per trip. The trip is given by
-- its position, not its id: the caller reads no id string per event.
select
    b.trip_pos, e.type, e.description, e.start_lat, e.start_lng, e.end_lat, e.end_lng,
    strftime(timezone($zone, e.started_at), '%Y-%m-%d %H:%M:%S') as start_time,
    strftime(timezone($zone, e.ended_at), '%Y-%m-%d %H:%M:%S') as end_time
from trip_events as e
join (
    select unnest($trip_ids::varchar[]) as trip_id, generate_subscripts($trip_ids::varchar[], 1) as trip_pos
) as b on e.trip_id = b.trip_id
where e.app_id = $app_id
    and e.started_at >= $from::timestamptz and e.started_at <= $to::timestamptz
order by b.trip_pos, e.started_at, e.event_index
