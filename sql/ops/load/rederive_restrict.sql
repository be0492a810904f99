-- Restricts one staged file, derived again by the current rules (load.js --rederive), to the trips
-- it may change: those whose warehouse copy came from this very file, and those without a copy.
-- A trip whose copy came from another file (sent again later) keeps that copy.
-- reads/writes: the staged temp tables (int_trip_records, int_trips, int_events); trips
-- params: $file_key VARCHAR
-- A record of a trip this file holds that the current record rules reject (a record time now out
-- of range) is not quarantined: its trip stays as stored, since a publish cannot retract a trip.

create or replace temp table rederive_elsewhere as
select n.app_id, n.trip_id
from int_trips as n
join trips as t on t.app_id = n.app_id and t.trip_id = n.trip_id
where t.file_key <> $file_key;

create or replace temp table rederive_kept_as_stored as
select r.line_no, r.reason, r.app_id, r.trip_id
from int_trip_records as r
join trips as t on t.app_id = r.app_id and t.trip_id = r.trip_id and t.source_line = r.line_no
where t.file_key = $file_key and r.reason is not null;

delete from int_trips as n using rederive_elsewhere as e
where n.app_id = e.app_id and n.trip_id = e.trip_id;

delete from int_events as v using rederive_elsewhere as e
where v.app_id = e.app_id and v.trip_id = e.trip_id and v.reason is null;

delete from int_trip_records as r using rederive_kept_as_stored as k
where r.line_no = k.line_no;
