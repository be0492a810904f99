-- The deletion requests a purge works on, one row per user (src/purge/purge.ts appends them).
-- writes: purge_requests (temp)
create or replace temp table purge_requests (app_id varchar, user_id bigint, org_user_id varchar, requested_at timestamptz)
