-- How many rows an exported table gives: its rows go in for rows (a quoted table, or export_rows.sql
-- in parentheses).
-- grain: one row
select count(*) as n from {{rows}}
