-- grain: one row: how many rows of an archived Parquet landing file belong to purged users
-- reads: the file; macro purged_record (sql/macros/purge.sql)
-- params: $file VARCHAR
select
    count(*) filter (where purged_record(appId, platformUserId, orgUserId)) as purged,
    count(*) as total
from read_parquet($file)
