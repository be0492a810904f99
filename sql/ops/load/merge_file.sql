-- Merges one staged file (int_trips, int_events, int_trip_records, int_points, raw_lines) into the warehouse.
-- Runs inside the file's transaction. params: $version, $batch_id, $source_file, $loaded_at,
-- $staged_after (the last batch merged before the file was staged)
-- A re-sent trip replaces the earlier one whole (docs/decisions.md, Trip records (load)): its row and its events.

-- The warehouse's copies of the trips this file sends again: usually none. Staging looked them
-- up (int_trip_records: owner_id, owner_trip_date); trips merged by this run's files since
-- batch $staged_after are found here, where batch_id's zone maps skip the older history. A
-- lookup in the whole history for every file would grow with the history. The deletes
-- below join this table, not the file's trips: a delete joined to a non-empty list of new ids
-- scans every event of the history, one joined to an empty list
-- reads nothing.
create or replace temp table replaced_trips as
select r.app_id, r.trip_id, r.owner_id as user_id, r.owner_trip_date as trip_date
from int_trip_records as r
semi join int_trips as n on n.app_id = r.app_id and n.trip_id = r.trip_id
where r.owner_id is not null
union
select t.app_id, t.trip_id, t.user_id, t.trip_date
from trips as t
semi join int_trips as n on n.app_id = t.app_id and n.trip_id = t.trip_id
where t.batch_id > $staged_after;

-- the stored copies' times and arrival (docs/decisions.md, Trip records (load), overlapping trips): a replaced trip keeps its first
-- arrival position, and the trips its old times overlapped are judged again (load/overlaps.ts).
-- Usually empty: a join to an empty list reads nothing of the history.
create or replace temp table replaced_copies as
select t.app_id, t.trip_id, t.user_id, t.started_at, t.ended_at, t.arrival_batch_id, t.arrival_line
from trips as t
semi join replaced_trips as r on r.app_id = t.app_id and r.trip_id = t.trip_id;

-- the user-days whose statistics change: where the new trips start, and where replaced ones did
create or replace temp table scope_user_days as
select distinct app_id, user_id, trip_date from int_trips
union
select app_id, user_id, trip_date from replaced_trips;

delete from trip_events as e using replaced_trips as r
where e.app_id = r.app_id and e.trip_id = r.trip_id;

delete from trips as t using replaced_trips as r
where t.app_id = r.app_id and t.trip_id = r.trip_id;

insert into trips by name
select
    n.*,
    $batch_id as batch_id,
    $version as version,
    coalesce(c.arrival_batch_id, $batch_id) as arrival_batch_id,
    coalesce(c.arrival_line, n.source_line) as arrival_line
from int_trips as n
left join replaced_copies as c on c.app_id = n.app_id and c.trip_id = n.trip_id;

insert into trip_events by name
select
    app_id, trip_id, user_id, event_index, type, started_at, ended_at,
    start_lat, start_lng, end_lat, end_lng,
    description_or_default as description,
    $version as version
from int_events
where reason is null;

-- the record's line as delivered (NDJSON; a Parquet row is located by file and row number alone);
-- time_out_of_range says the range, the load's clock (the file was validated at $loaded_at:
-- int_trip_records.sql's $validated_at) and the time outside it, in the words of the upload's 202
-- (src/api/upload/upload-check.ts, timeRangeDetail)
insert into quarantine by name
select
    $batch_id as batch_id, $source_file as source_file, r.line_no, 'record' as kind, r.reason,
    case when r.reason = 'time_out_of_range' then
        'startTime and endTime must lie between 2000-01-01T00:00:00.000Z and '
        || strftime(timezone('UTC', $loaded_at::timestamptz + interval 10 minute), '%Y-%m-%dT%H:%M:%S.%gZ')
        || ' (10 minutes after the server''s time, '
        || strftime(timezone('UTC', $loaded_at::timestamptz), '%Y-%m-%dT%H:%M:%S.%gZ') || '); '
        || case
            when r.started_at < timestamptz '2000-01-01 00:00:00+00'
                or r.started_at > $loaded_at::timestamptz + interval 10 minute
            then 'startTime is ' || strftime(timezone('UTC', r.started_at), '%Y-%m-%dT%H:%M:%S.%gZ')
            else 'endTime is ' || strftime(timezone('UTC', r.ended_at), '%Y-%m-%dT%H:%M:%S.%gZ')
        end
    end as detail,
    r.app_id, r.trip_id, rtrim(l.line, chr(13)) as raw, $loaded_at as quarantined_at
from int_trip_records as r
left join raw_lines as l on l.line_no = r.line_no
where r.reason is not null;

insert into quarantine by name
select
    $batch_id as batch_id, $source_file as source_file, line_no, 'event' as kind, reason,
    app_id, trip_id, raw, $loaded_at as quarantined_at
from int_events
where reason is not null;

insert into point_drops
select $batch_id, drop_reason, count(*)
from int_points
where drop_reason is not null
group by drop_reason;

delete from stats_daily as s using scope_user_days as d
where s.app_id = d.app_id and s.user_id = d.user_id and s.stat_date = d.trip_date;
