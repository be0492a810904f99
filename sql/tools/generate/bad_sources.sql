-- grain: one row per trip that will carry bad points and events in bad-records.ndjson
-- params: none (reads gen_records built for the bad-source range)
select to_json(r)::varchar as line
from (select * exclude (start_ms, end_ms) from gen_records) as r
order by r.tripId
