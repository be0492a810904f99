-- Three of the demo app's users, to show the requests to try.
-- grain: one row per user (at most 3), by org_user_id
-- reads: trips (a published slot)
-- params: $app VARCHAR
select distinct org_user_id from trips where app_id = $app order by 1 limit 3
