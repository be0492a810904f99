-- The rows a raw-points Parquet file keeps: all but the purged trips' points. The file goes in for
-- file as a quoted literal.
-- grain: one row per kept point
-- params: $ids VARCHAR[] (the purged trips' ids)
select * from read_parquet({{file}}) where not list_contains($ids, trip_id)
