-- Brings the events of a re-judged trip to its version. A trip's events carry its version
-- (sql/ops/publish/apply/insert_trips.sql copies a changed trip's events by it); a trip the overlap rule
-- re-judged used to take a new version without its events, which the publish's check
-- events_have_trips then refused at every later load. Touches nothing on a warehouse without such
-- trips; runs once, with the schema.
update trip_events as e
set version = t.version
from trips as t
where e.app_id = t.app_id and e.trip_id = t.trip_id and e.version < t.version;
