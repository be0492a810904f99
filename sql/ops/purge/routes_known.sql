-- grain: one row per route file (`published/routes/trip_date=<day>/v<version>.route`) of the
-- dates $days the index knows: a route file it does not know may hold anyone, so a purge opens it
-- reads: route_file_drivers
-- params: $days VARCHAR[]
select distinct trip_date::varchar as day, version
from route_file_drivers
where trip_date in (select unnest($days)::date)
