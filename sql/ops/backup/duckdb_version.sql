-- The DuckDB release a backup was made with, written in its manifest.
-- grain: one row
select version() as v
