-- grain: one row per kept point of one trip, in time order
-- params: $file VARCHAR (its route file, src/publish/routes.ts), $app_id, $trip_id VARCHAR
select epoch_ms(t) as t_ms, lat, lng, speed
from read_parquet($file)
where app_id = $app_id and trip_id = $trip_id
order by t
