-- grain: one row per kind and reason, most frequent first: what the filters of list.sql match
-- params: $date DATE (or null), $reason VARCHAR (or null), $kind VARCHAR (or null), $app VARCHAR (or null)
-- reads: quarantine_numbered (numbered.sql)
select kind, reason, count(*) as count
from quarantine_numbered
where ($date is null or quarantined_at::date = $date::date)
  and ($reason is null or reason = $reason)
  and ($kind is null or kind = $kind)
  and ($app is null or app_id = $app)
group by kind, reason
order by count desc, kind desc, reason
