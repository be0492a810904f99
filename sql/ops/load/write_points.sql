-- grain: one row per kept point of the file's loaded trips, ordered for compression and lookups
-- reads: int_points, int_trips
-- Written to Parquet partitioned by trip_date, so retention drops whole folders. Points are sorted
-- by app, trip and time through an integer rank of the file's trips: sorting millions of points on
-- two text keys costs more.
select n.app_id, n.trip_id, p.t, p.lat, p.lng, p.speed, n.trip_date
from int_points as p
join (
    select source_line, app_id, trip_id, trip_date, row_number() over (order by app_id, trip_id) as trip_rank
    from int_trips
) as n on n.source_line = p.line_no
where p.drop_reason is null
order by n.trip_rank, p.t
