-- grain: one row per line of an event file that could not be taken in
-- params: $rows VARCHAR (JSON array of {line_no, reason, raw}), $source_file VARCHAR, $now VARCHAR
insert into intake_rejects
select $source_file, r.line_no, r.reason, r.raw, $now::timestamptz
from (
    select unnest(from_json($rows, '[{"line_no":"INTEGER","reason":"VARCHAR","raw":"VARCHAR"}]'), recursive := true)
) as r
