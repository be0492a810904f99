-- grain: one row per kept point of the trips one warehouse version wrote for one trip date, in the
--        order the API reads them (app, trip, time)
-- reads: trips, the raw-point Parquet files of the files those trips came from
-- params: $files VARCHAR[] (the raw-point files of those file keys in the date's folder),
--         $version BIGINT, $trip_date DATE
-- distinct: a re-derivation killed between writing its new files and deleting the earlier ones
-- leaves a trip's points twice; they are the same rows.
with version_trips as (
    select app_id, trip_id
    from trips
    where version = $version and trip_date = $trip_date::date
)

select distinct p.app_id, p.trip_id, epoch_ms(p.t)::double as t_ms, p.lat, p.lng, p.speed
from read_parquet($files) as p
semi join version_trips as v on v.app_id = p.app_id and v.trip_id = p.trip_id
order by p.app_id, p.trip_id, t_ms
