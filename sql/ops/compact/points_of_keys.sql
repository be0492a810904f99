-- grain: one row per merged raw-points file of $trip_date holding live rows of any of $file_keys
-- (the route writer reads a version's points from these beside the unmerged files of those keys)
-- reads: points_merged
-- params: $trip_date DATE, $file_keys VARCHAR[]
select distinct name
from points_merged
where trip_date = $trip_date::date and live and source_key in (select unnest($file_keys))
order by name
