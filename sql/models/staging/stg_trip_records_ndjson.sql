-- grain: one row per record of one NDJSON file, in file order, when every line is a JSON object
--        whose fields have the record's types (the common case); line_no is set by the caller
-- params: $path VARCHAR
-- DuckDB's own reader, typed: the file is read once, in parallel, into the shape of
-- stg_trip_records. It uses the same JSON transform as from_json, so a value gets the same type
-- either way; a line it cannot take (malformed JSON, a value of the wrong type, a line that is not
-- an object) fails the statement, and the file is staged line by line instead
-- (stg_raw_lines + stg_trip_records), which tells every line's reason.
-- Identity and time fields stay JSON so validation can tell a number from a string.
select
    true as is_json,
    true as is_object,
    appId as app_id_json,
    platformUserId as platform_user_id_json,
    orgUserId as org_user_id_json,
    tripId as trip_id_json,
    deviceId as device_id_json,
    os as os_json,
    coordinate as coordinate_json,
    isAutoStart as is_auto_start_json,
    isAutoEnd as is_auto_end_json,
    startTime as start_time_json,
    endTime as end_time_json,
    startPoi as start_poi_json,
    endPoi as end_poi_json,
    points,
    events
from read_ndjson(
    $path,
    columns = {
        appId: 'JSON', platformUserId: 'JSON', orgUserId: 'JSON', tripId: 'JSON',
        deviceId: 'JSON', os: 'JSON', coordinate: 'JSON', isAutoStart: 'JSON', isAutoEnd: 'JSON',
        startTime: 'JSON', endTime: 'JSON', startPoi: 'JSON', endPoi: 'JSON',
        points: 'STRUCT(t VARCHAR, lat DOUBLE, lng DOUBLE, speed DOUBLE)[]',
        events: 'STRUCT(type VARCHAR, startTime VARCHAR, endTime VARCHAR, startPoint STRUCT(lat DOUBLE, lng DOUBLE), endPoint STRUCT(lat DOUBLE, lng DOUBLE), description VARCHAR)[]'
    },
    format = 'newline_delimited',
    records = true,
    maximum_object_size = 33554432
)
