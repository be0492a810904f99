-- The slot's copies of the changed trips and their events go (with changed trips).
-- params: none (reads changed_trips, sql/ops/publish/apply/scope.sql)

-- The changed trips the slot already holds: re-sent trips, usually none. The deletes join this
-- table, not changed_trips: a delete joined to a non-empty list scans the whole table, and for
-- trip_events that is every event of the history at every publish, while nearly every changed trip
-- is new. Finding them scans only the slot's trip ids.
create or replace temp table replaced_trips as
select s.app_id, s.trip_id
from slot.trips as s
semi join changed_trips as c on c.app_id = s.app_id and c.trip_id = s.trip_id;

delete from slot.trips as s using replaced_trips as r
where s.app_id = r.app_id and s.trip_id = r.trip_id;

delete from slot.trip_events as s using replaced_trips as r
where s.app_id = r.app_id and s.trip_id = r.trip_id;
