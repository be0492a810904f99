-- grain: one row per row of one Parquet file, in the same shape as stg_trip_records
-- params: $path VARCHAR
-- Parquet columns are already typed; to_json turns them into the JSON scalars the validation
-- reads, so NDJSON and Parquet pass through one set of rules. The load reads it as a view, so
-- each model takes only the columns it needs straight from the file.
select
    file_row_number + 1 as line_no,
    true as is_json,
    true as is_object,
    to_json(src.appId) as app_id_json,
    to_json(src.platformUserId) as platform_user_id_json,
    to_json(src.orgUserId) as org_user_id_json,
    to_json(src.tripId) as trip_id_json,
    to_json(src.deviceId) as device_id_json,
    to_json(src.os) as os_json,
    to_json(src.coordinate) as coordinate_json,
    to_json(src.isAutoStart) as is_auto_start_json,
    to_json(src.isAutoEnd) as is_auto_end_json,
    to_json(src.startTime) as start_time_json,
    to_json(src.endTime) as end_time_json,
    to_json(src.startPoi) as start_poi_json,
    to_json(src.endPoi) as end_poi_json,
    -- the point list as stored: int_points reads t, lat, lng and speed of each point whatever their
    -- stored types. Rebuilding the lists here would hold a whole row group's points at once, which
    -- a large file written as one row group does not fit in the memory limit.
    src.points as points,
    list_transform(src.events, e -> {
        'type': e.type::varchar, 'startTime': e.startTime::varchar, 'endTime': e.endTime::varchar,
        'startPoint': {'lat': e.startPoint.lat::double, 'lng': e.startPoint.lng::double},
        'endPoint': {'lat': e.endPoint.lat::double, 'lng': e.endPoint.lng::double},
        'description': e.description::varchar
    }) as events
from read_parquet($path, file_row_number = true) as src
