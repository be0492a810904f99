-- grain: one row per kept point of the trips one warehouse version wrote for one trip date, in the
--        order the route file holds them (as sql/ops/publish/route_points.sql), from the file's
--        staged points: the load writes the route file of the version its merge just committed
--        while those points are still in memory, instead of the publish reading them back from
--        the raw-point Parquet
-- reads: trips, int_trips, int_points (the staged file, on the same connection)
-- params: $version BIGINT, $trip_date DATE
-- The version's trips are numbered as route_trips.sql lists them; each is matched to its staged
-- record by the (small) trip rows, so the points join on the record's line number, not on text.
-- The rows are those sql/ops/load/write_points.sql writes to Parquet, so the file is the one the
-- publish would write from them (test/api/route.test.ts compares the bytes).
with version_trips as (
    select app_id, trip_id, (row_number() over (order by app_id, trip_id))::integer as k
    from trips
    where version = $version and trip_date = $trip_date::date
),

lines as (
    select v.k, s.source_line
    from version_trips as v
    join int_trips as s on s.app_id = v.app_id and s.trip_id = v.trip_id
)

select v.k, epoch_ms(p.t)::double as t_ms, p.lat, p.lng, p.speed
from version_trips as v
left join lines as l on l.k = v.k
left join int_points as p on p.line_no = l.source_line and p.drop_reason is null
-- the exact time after the millisecond, as route_points.sql: the same point is kept of two in one ms
order by v.k, t_ms, p.t
