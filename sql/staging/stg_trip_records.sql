-- grain: one row per non-blank line of one NDJSON file
-- reads: raw_lines (line_no, line)
-- Parses each line once. Identity and time fields stay JSON so validation can tell a number from
-- a string; points and events get their typed shape (a value of the wrong type becomes NULL).
with lines as (
    select line_no, rtrim(line, chr(13)) as line
    from raw_lines
    where line is not null and trim(line) <> ''
),

checked as (
    select
        line_no,
        line,
        json_valid(line) as is_json,
        json_valid(line) and starts_with(ltrim(line), '{') as is_object
    from lines
),

parsed as (
    select
        line_no,
        line,
        is_json,
        is_object,
        case when is_object then from_json(line, '{
            "appId": "JSON", "platformUserId": "JSON", "orgUserId": "JSON", "tripId": "JSON",
            "deviceId": "JSON", "os": "JSON", "coordinate": "JSON",
            "isAutoStart": "JSON", "isAutoEnd": "JSON",
            "startTime": "JSON", "endTime": "JSON", "startPoi": "JSON", "endPoi": "JSON",
            "points": [{"t": "VARCHAR", "lat": "DOUBLE", "lng": "DOUBLE", "speed": "DOUBLE"}],
            "events": [{"type": "VARCHAR", "startTime": "VARCHAR", "endTime": "VARCHAR",
                        "startPoint": {"lat": "DOUBLE", "lng": "DOUBLE"},
                        "endPoint": {"lat": "DOUBLE", "lng": "DOUBLE"},
                        "description": "VARCHAR"}]
        }') end as r
    from checked
)

select
    line_no,
    line as raw,
    is_json,
    is_object,
    r.appId as app_id_json,
    r.platformUserId as platform_user_id_json,
    r.orgUserId as org_user_id_json,
    r.tripId as trip_id_json,
    r.deviceId as device_id_json,
    r.os as os_json,
    r.coordinate as coordinate_json,
    r.isAutoStart as is_auto_start_json,
    r.isAutoEnd as is_auto_end_json,
    r.startTime as start_time_json,
    r.endTime as end_time_json,
    r.startPoi as start_poi_json,
    r.endPoi as end_poi_json,
    r.points as points,
    r.events as events
from parsed
