-- grain: one row per line of an event file that could not be taken in
-- params: $rows TEXT (JSON array of {line_no, reason, raw}), $source_file TEXT, $now TEXT
insert into webhooks.intake_rejects (source_file, line_no, reason, raw, rejected_at)
select $source_file::text, r.line_no, r.reason, r.raw, $now::timestamptz
from jsonb_to_recordset($rows::jsonb) as r(line_no integer, reason text, raw text)
