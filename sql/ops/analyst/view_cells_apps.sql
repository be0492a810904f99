-- The apps of several cells' exports read as one: every cell's export holds the apps of the shared
-- state store, so one row per app, whichever cell's. In: view (the quoted table name), files (a
-- list of quoted globs), cell_column (the quoted cell column), cell_key (its name as a quoted literal).
create or replace view {{view}} as
select distinct on (app_id) * exclude ({{cell_column}})
from read_parquet({{files}}, hive_partitioning = true, union_by_name = true, hive_types = { {{cell_key}}: varchar })
order by app_id
