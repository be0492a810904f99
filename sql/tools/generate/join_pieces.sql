-- A day's Parquet pieces read back in order (DuckDB keeps the insertion order), to be written as
-- one file: Parquet has one footer. The pieces go in for files as a list of quoted literals.
-- grain: one row per record of the day
select * from read_parquet({{files}})
