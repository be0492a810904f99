-- The users purged after version $since: a delta layer of the serving pack marks them, so that
-- their rows in the older layers are gone (src/serving/format.ts).
-- reads: purged_users (the warehouse's)
-- params: $since BIGINT
create or replace temp table serving_purged as
select distinct app_id, user_id from purged_users where version > $since;
