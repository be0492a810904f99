-- An exported table's rows with their partition column, ordered by user, so a reader filtering on a
-- user prunes row groups by their min/max. In: rows (export_rows.sql), by (the partition's
-- expression, EXPORTS in src/analyst/parquet-export.ts), partition (its quoted name).
-- grain: one row per exported row
select *, {{by}} as {{partition}} from ({{rows}}) order by app_id, user_id
