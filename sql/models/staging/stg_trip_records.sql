-- grain: one row per non-blank line of one NDJSON file, lines $first_line to $last_line
-- reads: raw_lines (line_no, line)
-- params: $first_line BIGINT, $last_line BIGINT
-- The path for a file that stg_trip_records_ndjson cannot take whole: each line is parsed on its
-- own, so a malformed line gets its reason and never stops the file. A large file is parsed a
-- range of lines at a time: from_json over one text column of the whole file does not fit in
-- memory (it is not spilled).
-- Parses each line once. Identity and time fields stay JSON so validation can tell a number from
-- a string; points and events get their typed shape (a value of the wrong type becomes NULL).
-- The line itself is not carried on: the quarantine takes it from raw_lines by line_no, so the
-- lines are not copied once per model.
with parsed as (
    select
        line_no,
        line,
        -- malformed JSON is the rare case: try() turns its error into NULL, and only those lines
        -- (and a bare `null`) are validated a second time below
        try(from_json(line, '{
            "appId": "JSON", "platformUserId": "JSON", "orgUserId": "JSON", "tripId": "JSON",
            "deviceId": "JSON", "os": "JSON", "coordinate": "JSON",
            "isAutoStart": "JSON", "isAutoEnd": "JSON",
            "startTime": "JSON", "endTime": "JSON", "startPoi": "JSON", "endPoi": "JSON",
            "points": [{"t": "VARCHAR", "lat": "DOUBLE", "lng": "DOUBLE", "speed": "DOUBLE"}],
            "events": [{"type": "VARCHAR", "startTime": "VARCHAR", "endTime": "VARCHAR",
                        "startPoint": {"lat": "DOUBLE", "lng": "DOUBLE"},
                        "endPoint": {"lat": "DOUBLE", "lng": "DOUBLE"},
                        "description": "VARCHAR"}]
        }')) as r
    from raw_lines
    where line_no between $first_line and $last_line
        and line is not null and regexp_matches(line, '[^\s]')
),

checked as (
    select
        line_no,
        -- from_json reads any valid document (an array or a scalar gives all-NULL fields), so a
        -- parsed line is JSON, and it is a record only when it is an object
        r is not null or json_valid(line) as is_json,
        r is not null and regexp_matches(line, '^\s*\{') as is_object,
        r
    from parsed
)

select
    line_no,
    is_json,
    is_object,
    case when is_object then r.appId end as app_id_json,
    case when is_object then r.platformUserId end as platform_user_id_json,
    case when is_object then r.orgUserId end as org_user_id_json,
    case when is_object then r.tripId end as trip_id_json,
    case when is_object then r.deviceId end as device_id_json,
    case when is_object then r.os end as os_json,
    case when is_object then r.coordinate end as coordinate_json,
    case when is_object then r.isAutoStart end as is_auto_start_json,
    case when is_object then r.isAutoEnd end as is_auto_end_json,
    case when is_object then r.startTime end as start_time_json,
    case when is_object then r.endTime end as end_time_json,
    case when is_object then r.startPoi end as start_poi_json,
    case when is_object then r.endPoi end as end_poi_json,
    case when is_object then r.points end as points,
    case when is_object then r.events end as events
from checked
