-- a DELETE's request for the jobs; an earlier release's request file taken in again adds nothing
insert into deletion_requests (id, app_id, platform_user_id, org_user_id, requested_at, purged_at, purged_trips)
values ($id, $app_id, $platform_user_id, $org_user_id, $requested_at, null, null)
on conflict (id) do nothing
