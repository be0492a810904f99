-- How many users were purged after warehouse version $since (src/publish/retire.ts: none, and the
-- slot the API stopped serving has nothing to scrub).
-- grain: one row
-- reads: purged_users
-- params: $since BIGINT (the retired slot's version)
select count(*)::bigint as n from (select distinct app_id, user_id from purged_users where version > $since)
