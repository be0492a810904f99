-- grain: one row per local day with trips, and one for the bad-source trips (trip_day NULL)
-- params: none (reads gen_trips)
select
    case when is_bad_source then null else strftime(trip_day, '%Y-%m-%d') end as trip_day,
    min(trip_no) as first_trip_no,
    max(trip_no) as last_trip_no
from gen_trips
group by all
order by all
