-- The records picked for one cell of the file being split (split_parquet_rows.sql).
-- grain: one row
select count(*)::integer as n from split_rows
