-- grain: one row per trip that will carry bad points and events in bad-records.ndjson
-- params: $first_trip_no BIGINT, $last_trip_no BIGINT, $app_id VARCHAR, $time_zone VARCHAR (the
--         bad-source range of trip_no, built last by src/generate/write-days.ts)
select to_json(r)::varchar as line
from (
    select * exclude (start_ms, end_ms)
    from gen_records($first_trip_no::bigint, $last_trip_no::bigint, $app_id::varchar, $time_zone::varchar)
) as r
order by r.tripId
