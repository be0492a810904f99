-- grain: one row per trip record starting on one local day, as written to trips-<day>.ndjson
-- params: $day DATE
select * exclude (trip_day, start_ms, end_ms, is_bad_source, abnormal_kind)
from gen_records
where trip_day = $day::date and not is_bad_source
order by start_ms, tripId
