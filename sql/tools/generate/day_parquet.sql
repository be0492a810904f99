-- grain: one row per trip record of gen_records (one local day), as written to trips-<day>.parquet
-- params: $time_zone VARCHAR
-- A Parquet column has one type: startTime/endTime are always ISO strings with the offset here.
select * exclude (start_ms, end_ms) replace (
    gen_iso(start_ms, $time_zone) as startTime,
    gen_iso(end_ms, $time_zone) as endTime)
from gen_records
order by start_ms, tripId
