-- a DELETE: the account stops being active (its tokens stop resolving with it)
update accounts set deleted_at = $now
where platform_user_id = $platform_user_id and app_id = $app_id and deleted_at is null
