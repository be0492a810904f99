-- check: a trip key (app_id, trip_id) appears once. Returns the offending keys.
-- changes: trips
-- params: $since BIGINT (0 checks everything; otherwise only keys written after that version)
-- A semi join on the key's columns, not `(app_id, trip_id) in (select (app_id, trip_id) ...)`: the
-- join's keys filter the scan of the history (DuckDB pushes them into it), a row comparison does
-- not, and every publish would read every trip's key.
with written as (
    select distinct app_id, trip_id from trips where version > $since
)

select t.app_id, t.trip_id, count(*) as copies
from trips as t
semi join written as w on w.app_id = t.app_id and w.trip_id = t.trip_id
group by t.app_id, t.trip_id
having count(*) > 1
