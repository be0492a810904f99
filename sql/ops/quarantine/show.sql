-- grain: the one quarantined record line or event with this id
-- params: $id VARCHAR
-- reads: quarantine_numbered (numbered.sql)
-- (detail where the warehouse has it: sql/ops/warehouse/quarantine_columns.sql)
select *
from quarantine_numbered
where id = $id
