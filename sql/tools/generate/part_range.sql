-- grain: one row: the block's trips in its day files and its bad-source trips (gen_day_trips)
-- params: none
select
    count(*) filter (where not is_bad_source) as trips,
    count(*) filter (where is_bad_source) as bad_source_trips
from gen_day_trips
