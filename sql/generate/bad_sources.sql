-- grain: one row per trip that will carry bad points and events in bad-records.ndjson
-- params: none (reads gen_records)
with sources as (
    select * exclude (trip_day, start_ms, end_ms, is_bad_source, abnormal_kind)
    from gen_records
    where is_bad_source
)

select to_json(r)::varchar as line
from sources as r
order by r.tripId
