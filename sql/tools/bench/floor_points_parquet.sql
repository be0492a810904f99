-- grain: one row per delivered point of Parquet trip files, typed as the load stores them
-- params: $files VARCHAR[]
-- The points whose sorted ZSTD Parquet write is the second half of the load's floor (bare read +
-- write): materialised first, untimed, so the write is timed alone.
select appId as app_id, tripId as trip_id, to_timestamp(p.t / 1000) as t, p.lat, p.lng, p.speed
from (select appId, tripId, unnest(points) as p from read_parquet($files::varchar[]))
