-- An exported table read back from its partitioned Parquet files, the partition column dropped
-- again. In: view (the quoted table name), files (the quoted glob), partition (its quoted name).
create or replace view {{view}} as
select * exclude ({{partition}})
from read_parquet({{files}}, hive_partitioning = true, union_by_name = true)
