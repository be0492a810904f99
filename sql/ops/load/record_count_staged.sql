-- How many records DuckDB's typed reader staged, compared with the file's line count.
-- grain: one row
-- reads: stg_trip_records (staged)
select count(*)::double as n from stg_trip_records
