-- the purge of a deleted account: its user id at the integrator goes; the row stays so that its
-- platform user id is never handed out again
update accounts set org_user_id = '' where platform_user_id = $platform_user_id and deleted_at is not null
