-- grain: one row per trip record of a range of trips (one local day's share of a part), as written
--        to trips-<day>.parquet
-- params: $first_trip_no BIGINT, $last_trip_no BIGINT, $app_id VARCHAR, $time_zone VARCHAR
-- A Parquet column has one type: startTime/endTime are always ISO strings with the offset here.
select * exclude (start_ms, end_ms) replace (
    gen_iso(start_ms, $time_zone::varchar) as startTime,
    gen_iso(end_ms, $time_zone::varchar) as endTime)
from gen_records($first_trip_no::bigint, $last_trip_no::bigint, $app_id::varchar, $time_zone::varchar)
order by start_ms, tripId
