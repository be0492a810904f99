-- No rows, the columns of an exported table (app_id, a partition, aside): an empty table's schema
-- stays readable for analysts. The table goes in for table (quoted).
-- grain: no rows
select * exclude (app_id) from {{table}} limit 0
