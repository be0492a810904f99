-- The rows an archived Parquet landing file keeps: all but those of the users in purge_requests
-- (macro purged_record, sql/macros/purge.sql), in the file's order. The file goes in for file as a
-- quoted literal (the COPY that writes the rows takes the path as text).
-- grain: one row per kept record
select * from read_parquet({{file}}) where not purged_record(appId, platformUserId, orgUserId)
