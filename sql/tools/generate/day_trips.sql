-- grain: one row per generated trip of a block of local days (gen_trips built for those days
--        alone), numbered in the order the day files list them (day, start, trip id), the
--        bad-source trips last
-- params: none (reads gen_trips)
-- The generator writes a block a part of its trips at a time (src/generate/write-days.ts): part k
-- is the trips numbered in its range, so the parts' records appended in order are the day files.
create or replace temp table gen_day_trips as
select *, row_number() over (order by is_bad_source, trip_day, start_ms, trip_id) as out_no
from gen_trips
