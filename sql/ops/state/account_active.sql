-- grain: the active account of one user of one app (none when never registered or deleted)
select platform_user_id from accounts
where app_id = $app_id and org_user_id = $org_user_id and deleted_at is null
