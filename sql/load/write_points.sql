-- grain: one row per kept point of the file's loaded trips, ordered for compression and lookups
-- reads: int_points, int_trips
-- Written to Parquet partitioned by trip_date, so retention drops whole folders.
select n.app_id, n.trip_id, p.t, p.lat, p.lng, p.speed, n.trip_date
from int_points as p
join int_trips as n on n.source_line = p.line_no
where p.drop_reason is null
order by n.app_id, n.trip_id, p.t
