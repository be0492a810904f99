-- check: a trip key (app_id, trip_id) appears once. Returns the offending keys.
-- changes: trips
-- params: $since BIGINT (0 checks everything; otherwise only keys written after that version)
select app_id, trip_id, count(*) as copies
from trips
where (app_id, trip_id) in (select (app_id, trip_id) from trips where version > $since)
group by app_id, trip_id
having count(*) > 1
