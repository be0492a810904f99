-- Removes the users purged after version $since from the slot the API has just stopped serving
-- (attached as `retired`), so that after a purge's publish neither slot holds their rows. Its
-- meta version stays: the next publish brings it up to date from there and finds nothing of
-- theirs left to delete.
-- reads: purged_users (the warehouse's)
-- params: $since BIGINT
create or replace temp table retired_purged as
select distinct app_id, user_id from purged_users where version > $since;

delete from retired.trips as s using retired_purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
delete from retired.trip_events as s using retired_purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
delete from retired.stats_daily as s using retired_purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
delete from retired.safety_scores as s using retired_purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
