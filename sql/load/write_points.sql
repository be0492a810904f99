-- grain: one row per kept point of the file's loaded trips, ordered for compression and lookups
-- reads: int_points, int_trips
-- Written to Parquet partitioned by trip_date, so retention drops whole folders.
select p.app_id, p.trip_id, p.t, p.lat, p.lng, p.speed, n.trip_date
from int_points as p
join int_trips as n on n.app_id = p.app_id and n.trip_id = p.trip_id
where p.drop_reason is null
order by p.app_id, p.trip_id, p.t
