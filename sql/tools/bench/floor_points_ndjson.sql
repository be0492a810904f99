-- grain: one row per delivered point of NDJSON trip files, typed as the load stores them
-- params: $files VARCHAR[]
-- The points whose sorted ZSTD Parquet write is the second half of the load's floor (bare read +
-- write): materialised first, untimed, so the write is timed alone.
select
    json_extract_string(appId, '$') as app_id,
    json_extract_string(tripId, '$') as trip_id,
    to_timestamp(try_cast(p.t as double) / 1000) as t,
    p.lat, p.lng, p.speed
from (
    select appId, tripId, unnest(points) as p
    from read_ndjson(
        $files::varchar[],
        columns = {'appId': 'JSON', 'tripId': 'JSON', 'points': 'STRUCT(t VARCHAR, lat DOUBLE, lng DOUBLE, speed DOUBLE)[]'},
        maximum_object_size = 33554432
    )
)
