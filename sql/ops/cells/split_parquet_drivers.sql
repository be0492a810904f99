-- The drivers of a partner Parquet file, for the split by cell (src/cells/split-parquet.ts): a
-- record without a valid app and platform user id names none (the load judges it).
-- grain: one row per app and platform user id
-- params: $source (the file's path)
select distinct try_cast(appId as varchar) as app_id, try_cast(platformUserId as bigint) as user_id
from read_parquet($source)
where try_cast(appId as varchar) is not null and try_cast(platformUserId as bigint) >= 1
