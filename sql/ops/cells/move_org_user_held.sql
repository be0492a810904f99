-- The orgUserId a driver's trips here carry (src/cells/move-leave.ts).
-- grain: one row
-- params: $app_id, $user_id
select any_value(org_user_id) as org from trips where app_id = $app_id and user_id = $user_id
