-- grain: one row per merged route file of a trip date from $oldest: the versions it stands for
-- reads: route_file_spans
-- params: $oldest DATE
select trip_date::varchar as trip_date, first_version, version
from route_file_spans
where trip_date >= $oldest::date
