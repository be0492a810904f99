-- grain: one row: what the day files hold (bad-source trips go to bad-records.ndjson only)
-- params: none (reads gen_records)
select
    count(*) as trips,
    coalesce(sum(len(points)), 0) as points,
    coalesce(sum(len(events)), 0) as events,
    count(*) filter (where abnormal_kind is not null) as abnormal_trips
from gen_records
where not is_bad_source
