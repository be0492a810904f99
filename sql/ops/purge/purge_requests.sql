-- The deletion requests a purge works on, one row per user (src/purge/purge.ts appends them), and
-- the drivers moved to another cell it erases here (moved: no request, no user.deleted event).
-- writes: purge_requests (temp)
create or replace temp table purge_requests (app_id varchar, user_id bigint, org_user_id varchar, requested_at timestamptz, moved boolean)
