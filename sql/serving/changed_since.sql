-- What the serving pack's trips file must take from SQL when it copies the rest from the served
-- file (valid at version $since): trips written after it, and users purged after it.
-- reads: trips, purged_users (the warehouse's)
-- params: $since BIGINT
create or replace temp table serving_changed as
select app_id, user_id, trip_id from trips where version > $since;

create or replace temp table serving_purged as
select distinct app_id, user_id from purged_users where version > $since;
