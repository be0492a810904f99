-- the platform user ids of an app's deleted accounts (the bulk export leaves their trips out)
select platform_user_id from accounts
where app_id = $app_id and deleted_at is not null
