-- grain: one row: what the generated records hold
-- params: none (reads gen_records)
select
    count(*) as trips,
    coalesce(sum(len(points)), 0) as points,
    coalesce(sum(len(events)), 0) as events,
    count(*) filter (where abnormal_kind is not null) as abnormal_trips
from gen_records
