-- grain: one row: the warehouse's normal trips (the only ones a score counts) and the days they
-- start on, to say why a run scored nobody
-- params: none
select
    count(*) as normal_trips,
    min(trip_date)::varchar as first_day,
    max(trip_date)::varchar as last_day
from trips
where is_normal
