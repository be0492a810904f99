-- The drivers of the route file of ($trip_date, $version) about to be written: the same trips as
-- route_trips.sql, entered in route_file_drivers (src/purge/index.ts) before the file exists.
-- params: $version BIGINT, $trip_date DATE
insert into route_file_drivers
select distinct $trip_date::date, $version::bigint, t.app_id, t.user_id
from trips as t
where t.version = $version and t.trip_date = $trip_date::date
    and not exists (
        select 1 from route_file_drivers as r
        where r.trip_date = $trip_date::date and r.version = $version and r.app_id = t.app_id and r.user_id = t.user_id
    )
