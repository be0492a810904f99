-- The temp tables and views among $names that this connection holds, each with its kind (a view
-- is dropped with DROP VIEW): what dropStaged frees after a file.
select table_name as name, 'table' as kind
from duckdb_tables()
where database_name = 'temp' and schema_name = 'main' and list_contains($names, table_name)
union all
select view_name as name, 'view' as kind
from duckdb_views()
where database_name = 'temp' and schema_name = 'main' and list_contains($names, view_name)
