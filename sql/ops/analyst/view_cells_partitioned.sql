-- An exported table of several cells' exports read as one, the cell and partition columns dropped
-- again (a cell's name is text whatever it looks like: a cell named 1 is not a number). In: view
-- (the quoted table name), files (a list of quoted globs), cell_column, partition (quoted names),
-- cell_key (the cell column's name as a quoted literal).
create or replace view {{view}} as
select * exclude ({{cell_column}}, {{partition}})
from read_parquet({{files}}, hive_partitioning = true, union_by_name = true, hive_types = { {{cell_key}}: varchar })
