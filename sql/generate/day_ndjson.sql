-- grain: one row per trip record of a range of trips (one local day's share of a part), as written
--        to trips-<day>.ndjson
-- params: $first_trip_no BIGINT, $last_trip_no BIGINT, $app_id VARCHAR, $time_zone VARCHAR
select * exclude (start_ms, end_ms)
from gen_records($first_trip_no::bigint, $last_trip_no::bigint, $app_id::varchar, $time_zone::varchar)
order by start_ms, tripId
