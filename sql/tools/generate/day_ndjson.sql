-- grain: one row per trip record of gen_records (one local day), as written to trips-<day>.ndjson
-- params: none
select * exclude (start_ms, end_ms)
from gen_records
order by start_ms, tripId
