-- grain: one row per trip date and loaded file of a moved driver's trips within points retention:
-- where its raw points are (src/cells/move-package.ts)
-- reads: move_trips
-- params: $oldest DATE
select trip_date::varchar as trip_date, file_key, list(trip_id order by trip_id) as trip_ids
from move_trips
where trip_date >= $oldest::date
group by trip_date, file_key
order by trip_date, file_key
