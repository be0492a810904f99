-- grain: one row: the bytes DuckDB's buffer manager holds for this instance, in all and for the
--        blocks of the database's tables (cached reads of a read-only file), and its cap
-- params: none
select
    sum(memory_usage_bytes)::bigint as total_bytes,
    (sum(memory_usage_bytes) filter (where tag = 'BASE_TABLE'))::bigint as table_bytes,
    current_setting('memory_limit') as memory_limit
from duckdb_memory()
