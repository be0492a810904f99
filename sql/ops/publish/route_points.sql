-- grain: one row per kept point of the trips one warehouse version wrote for one trip date, in the
--        order the route file holds them: trip by trip (numbered as route_trips.sql lists them,
--        from 1), then time; a trip that kept no point is one row with its point columns NULL
-- reads: trips, the raw-point Parquet files of the files those trips came from
-- params: $files VARCHAR[] (the raw-point files of those file keys in the date's folder; at least
--         one), $version BIGINT, $trip_date DATE
-- Numbers, not text keys: the writer reads doubles and integers straight from DuckDB's vectors,
-- where a text key on every point cost more than everything else the publish does with them.
-- A re-derivation killed between writing its new files and deleting the earlier ones leaves a
-- trip's points twice: the same rows, side by side in this order, and the writer keeps one of each
-- time (src/warehouse/route-files.ts). A DISTINCT here would hash every point of the date at once, which
-- a large day does not fit in the memory limit.
with version_trips as (
    select app_id, trip_id, (row_number() over (order by app_id, trip_id))::integer as k
    from trips
    where version = $version and trip_date = $trip_date::date
)

select v.k, p.t_ms, p.lat, p.lng, p.speed
from version_trips as v
left join (
    select app_id, trip_id, t, epoch_ms(t)::double as t_ms, lat, lng, speed
    from read_parquet($files)
) as p on p.app_id = v.app_id and p.trip_id = v.trip_id
-- the exact time after the millisecond: of two points in one millisecond the writer keeps the first
order by v.k, p.t_ms, p.t
