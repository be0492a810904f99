-- grain: one row with the count of merged trips ($app_ids, $trip_ids side by side) no trip row
-- names: their driver cannot be entered in the purge's index
-- reads: trips
-- params: $app_ids VARCHAR[], $trip_ids VARCHAR[]
select count(*)::bigint as n
from (select unnest($app_ids) as app_id, unnest($trip_ids) as trip_id) as m
where not exists (select 1 from trips as t where t.app_id = m.app_id and t.trip_id = m.trip_id)
