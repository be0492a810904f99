-- Whether a raw record (its appId, platformUserId, orgUserId as delivered) belongs to a user in
-- temp table purge_requests: the user's app, and the user's platformUserId, or no valid
-- platformUserId and the user's orgUserId (the rule of src/purge/archives.ts for NDJSON lines).
-- reads: purge_requests (app_id, user_id, org_user_id, requested_at)
create or replace temp macro purged_record(record_app_id, record_user_id, record_org_user_id) as exists (
    select 1
    from purge_requests as p
    where p.app_id = record_app_id::varchar
        and case
            when coalesce(try_cast(record_user_id as bigint), 0) >= 1 then try_cast(record_user_id as bigint) = p.user_id
            else record_org_user_id::varchar = p.org_user_id
        end
);
