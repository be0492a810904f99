-- grain: one row per version of $versions whose route file of $trip_date the purge's index does
-- not know (no row in route_file_drivers): a file written before the index, which may hold anyone
-- reads: route_file_drivers
-- params: $trip_date DATE, $versions BIGINT[]
select v.version
from (select unnest($versions)::bigint as version) as v
where not exists (
    select 1 from route_file_drivers as r
    where r.trip_date = $trip_date::date and r.version = v.version
)
