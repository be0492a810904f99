-- How many trips one app's section build takes from SQL: it goes in steps of about
-- DRIVING_SERVING_PACK_STEP_ROWS trips' users (src/serving/build.ts).
-- reads: trips
-- params: $app_id VARCHAR, $since BIGINT (-1: every trip)
select count(*)::double as n
from trips
where app_id = $app_id and version > $since
