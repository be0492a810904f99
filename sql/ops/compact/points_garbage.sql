-- grain: one row per source of a committed merge of a raw-points file of a date, not yet removed
-- reads: points_merge_garbage
-- params: $trip_date DATE
select name, source
from points_merge_garbage
where trip_date = $trip_date::date
order by name, source
