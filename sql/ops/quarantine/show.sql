-- grain: the one quarantined record line or event with this id
-- params: $id VARCHAR
-- reads: quarantine_numbered (numbered.sql)
select id, quarantined_at, kind, reason, source_file, line_no, app_id, trip_id, raw, batch_id
from quarantine_numbered
where id = $id
