-- grain: one row per trip one warehouse version wrote for one trip date, numbered in the order of
--        the route file (app, trip): route_points.sql names a trip by this number only
-- params: $version BIGINT, $trip_date DATE
select app_id, trip_id
from trips
where version = $version and trip_date = $trip_date::date
order by app_id, trip_id
