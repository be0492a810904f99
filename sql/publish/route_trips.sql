-- grain: one row per trip one warehouse version wrote for one trip date, when none of them kept a
--        point (no raw-point file): listed in the route file without points, in the API's order
-- params: $version BIGINT, $trip_date DATE
select app_id, trip_id, null::double as t_ms, null::double as lat, null::double as lng, null::double as speed
from trips
where version = $version and trip_date = $trip_date::date
order by app_id, trip_id
