-- grain: one row per quarantined record line or event, newest load first, then by file and line
-- params: $date DATE (the UTC day of the load, or null for every day), $reason VARCHAR (or null),
--         $kind VARCHAR (record | event, or null), $app VARCHAR (or null), $limit BIGINT
-- reads: quarantine_numbered (numbered.sql)
select
    id, quarantined_at, kind, reason, source_file, line_no, app_id, trip_id,
    count(*) over () as matching
from quarantine_numbered
where ($date is null or quarantined_at::date = $date::date)
  and ($reason is null or reason = $reason)
  and ($kind is null or kind = $kind)
  and ($app is null or app_id = $app)
order by quarantined_at desc, batch_id desc, line_no, kind desc, id
limit $limit
