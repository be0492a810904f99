-- An exported table read back from its one Parquet file, under the table's name. In: view (the
-- quoted table name), file (the quoted path).
create or replace view {{view}} as select * from read_parquet({{file}})
