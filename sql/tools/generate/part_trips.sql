-- grain: one row per trip of one part of a day (src/generate/write-days.ts): gen_trips as the
--        steps after it (legs, points, events, records) read it, holding only this part's trips
-- params: $first_out_no BIGINT, $last_out_no BIGINT (a range of gen_day_trips.out_no)
create or replace temp table gen_trips as
select * exclude (out_no)
from gen_day_trips
where out_no between $first_out_no::bigint and $last_out_no::bigint
order by trip_no
