-- grain: no rows: the columns of one Parquet file and their types, read from its footer (the
-- load compares them with the record format before it stages the file: src/load/parquet-schema.ts)
-- params: $path VARCHAR
select * from read_parquet($path) limit 0
