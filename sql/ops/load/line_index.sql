-- An empty line_index(ordinal, line_no): the n-th non-blank line's number, appended by
-- src/load/raw-lines.ts, for stg_line_numbers.sql.
-- writes: line_index (temp)
create or replace temp table line_index (ordinal bigint, line_no bigint)
