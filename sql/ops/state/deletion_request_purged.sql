-- a purge acted on the request: when, and how many of the user's trips it removed; the org user
-- id goes with the account's (sql/ops/state/account_erase.sql)
update deletion_requests set purged_at = $purged_at, purged_trips = $purged_trips, org_user_id = null
where id = $id and purged_at is null
