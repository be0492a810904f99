-- grain: one row per merged raw-points file of $trip_date and loaded file whose rows it holds
-- reads: points_merged
-- params: $trip_date DATE
select name, source_key, live
from points_merged
where trip_date = $trip_date::date
order by name, source_key
