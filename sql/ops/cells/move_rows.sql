-- grain: one row: the rows of one file of a moved driver's package
-- params: $file VARCHAR
select count(*)::bigint as n from read_parquet($file)
