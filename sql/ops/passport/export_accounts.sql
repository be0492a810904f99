-- grain: one row per account of a passport.duckdb of an earlier release, times as ISO-8601 UTC text
-- (the form the shared state store keeps); read once, when the data folder is migrated
select
    platform_user_id,
    app_id,
    org_user_id,
    strftime(created_at at time zone 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') as created_at,
    strftime(deleted_at at time zone 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') as deleted_at
from accounts
order by platform_user_id
