-- grain: one row per kept point of the trips one warehouse version wrote for one trip date, in the
--        order the API reads them (app, trip, time)
-- reads: trips, the raw-point Parquet files of the files those trips came from
-- params: $files VARCHAR[] (the raw-point files of those file keys in the date's folder; at least one),
--         $version BIGINT, $trip_date DATE
-- A re-derivation killed between writing its new files and deleting the earlier ones leaves a
-- trip's points twice: the same rows, side by side in this order, and the writer keeps one of each
-- time (src/publish/routes.ts). A DISTINCT here hashed every point of the date and ran out of
-- memory on a 74 M-point day at a 1 GB limit.
with version_trips as (
    select app_id, trip_id
    from trips
    where version = $version and trip_date = $trip_date::date
)

-- A trip that kept no point is listed too (one row, its point columns NULL), so the newest file of
-- a date that lists a trip always holds its served copy (src/api/trip-route.ts reads it so).
select v.app_id, v.trip_id, p.t_ms, p.lat, p.lng, p.speed
from version_trips as v
left join (
    select app_id, trip_id, epoch_ms(t)::double as t_ms, lat, lng, speed
    from read_parquet($files)
) as p on p.app_id = v.app_id and p.trip_id = v.trip_id
order by v.app_id, v.trip_id, p.t_ms
