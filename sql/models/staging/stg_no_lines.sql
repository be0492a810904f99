-- grain: none: the raw_lines of a Parquet file, which has rows rather than lines
-- A Parquet row is located by file and row number; serialising every row for the quarantine would
-- cost more than it tells. The merge reads raw_lines for both formats.
select null::bigint as line_no, null::varchar as line
where false
