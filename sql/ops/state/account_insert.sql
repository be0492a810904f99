-- a new active account; nothing when the user already has one (another process made it first)
insert into accounts (platform_user_id, app_id, org_user_id, created_at, deleted_at)
values ($platform_user_id, $app_id, $org_user_id, $created_at, $deleted_at)
on conflict do nothing
