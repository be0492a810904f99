-- grain: one row per trip record starting on one local day, as written to trips-<day>.parquet
-- params: $day DATE, $time_zone VARCHAR
-- A Parquet column has one type: startTime/endTime are always ISO strings with the offset here.
select * exclude (trip_day, start_ms, end_ms, is_bad_source, abnormal_kind) replace (
    gen_iso(start_ms, $time_zone) as startTime,
    gen_iso(end_ms, $time_zone) as endTime)
from gen_records
where trip_day = $day::date and not is_bad_source
order by start_ms, tripId
