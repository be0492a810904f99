-- How many points of the purged trips a raw-points Parquet file holds (none: the file is left as it is).
-- grain: one row
-- params: $file VARCHAR, $ids VARCHAR[] (the purged trips' ids)
select count(*) as n from read_parquet($file) where list_contains($ids, trip_id)
