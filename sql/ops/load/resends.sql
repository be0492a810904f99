-- An SDK upload cannot rewrite a trip (docs/decisions.md, Trip records (load), SDK re-sends): each staged record of a trip the
-- account already has, stored from another file, is compared with the stored trip, field by field
-- as parsed and its points and events through their digest (int_trip_content.sql); so is each
-- later line of the file that sends a trip of the file again (the first line is the one loaded). An equal one is
-- accepted and changes nothing (is_unchanged); another is rejected as trip_immutable, and the
-- stored trip stays as it was. Either way the record leaves the staged trips, events and points.
-- reads/writes: the staged temp tables (int_trip_records, int_trips, int_events, int_points); trips
-- params: $file_key VARCHAR (a re-derivation of the file that stored the trip is not a re-send),
--         $sdk_upload BOOLEAN
-- Staging found the stored copies (int_trip_records.owner_id), so the join reads the history only
-- when the file sends a known trip again.
create or replace temp table resent_records as
select
    n.source_line as line_no,
    coalesce(
        n.user_id = t.user_id and n.org_user_id = t.org_user_id and n.device_id = t.device_id
        and n.os = t.os and n.coordinate = t.coordinate
        and n.is_auto_start = t.is_auto_start and n.is_auto_end = t.is_auto_end
        and n.started_at = t.started_at and n.ended_at = t.ended_at
        and n.start_poi is not distinct from t.start_poi and n.end_poi is not distinct from t.end_poi
        -- a trip stored before digests were kept has none: it cannot be shown equal
        and n.content_hash = t.content_hash,
        false
    ) as is_same
from int_trips as n
semi join (select line_no from int_trip_records where owner_id is not null) as o on o.line_no = n.source_line
join trips as t on t.app_id = n.app_id and t.trip_id = n.trip_id
where t.file_key <> $file_key;

-- a later line of an SDK upload file that sends a trip of the file again: compared with the line
-- that is loaded, the lists as parsed (int_trip_content's digest needs derived points)
insert into resent_records
select
    d.line_no,
    coalesce(
        d.platform_user_id_text = w.platform_user_id_text and d.org_user_id = w.org_user_id
        and d.device_id = w.device_id and d.os = w.os and d.coordinate = w.coordinate
        and d.is_auto_start = w.is_auto_start and d.is_auto_end = w.is_auto_end
        and d.started_at = w.started_at and d.ended_at = w.ended_at
        and d.start_poi is not distinct from w.start_poi and d.end_poi is not distinct from w.end_poi
        -- an absent list is an empty one
        and (coalesce(len(sd.points), 0) = 0 and coalesce(len(sw.points), 0) = 0
             or parsed_points(sd.points) is not distinct from parsed_points(sw.points))
        and (coalesce(len(sd.events), 0) = 0 and coalesce(len(sw.events), 0) = 0
             or parsed_events(sd.events) is not distinct from parsed_events(sw.events)),
        false
    ) as is_same
from int_trip_records as d
join int_trip_records as w
    on w.app_id = d.app_id and w.trip_id = d.trip_id and w.reason is null and not w.superseded_in_file
join stg_trip_records as sd on sd.line_no = d.line_no
join stg_trip_records as sw on sw.line_no = w.line_no
where $sdk_upload and d.superseded_in_file;

update int_trip_records as r
set superseded_in_file = false
from resent_records as s
where s.line_no = r.line_no;

update int_trip_records as r
set reason = case when s.is_same then null else 'trip_immutable' end, is_unchanged = s.is_same
from resent_records as s
where s.line_no = r.line_no;

delete from int_trips where source_line in (select line_no from resent_records);

delete from int_events where line_no in (select line_no from resent_records);

delete from int_points where line_no in (select line_no from resent_records);
