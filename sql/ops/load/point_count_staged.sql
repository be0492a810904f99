-- How many points the staged records (NDJSON) deliver; point_count_parquet.sql for Parquet.
-- grain: one row
-- reads: stg_trip_records (staged)
select coalesce(sum(len(points)), 0)::bigint as points from stg_trip_records
