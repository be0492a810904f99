select 1 as deleted from accounts
where platform_user_id = $platform_user_id and app_id = $app_id and deleted_at is not null
