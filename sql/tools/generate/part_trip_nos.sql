-- grain: one row per local day of one part's trips (gen_trips), and one for its bad-source trips:
--        the range of trip_no, for tools/generate/records.sql (trip_no is day-major with the bad-source
--        trips last, so each is one range)
-- params: none
select
    is_bad_source,
    strftime(trip_day, '%Y-%m-%d') as trip_day,
    min(trip_no) as first_trip_no,
    max(trip_no) as last_trip_no
from gen_trips
group by all
order by is_bad_source, trip_day
