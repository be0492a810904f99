-- grain: one row per event queued for one replay (a single attempt, not rescheduled)
-- params: $event_id TEXT (one event, or null), $app TEXT (or null), $since TEXT (ISO instant, or
--         null), $statuses TEXT (JSON array of the states that may be replayed), $now TEXT
-- Events already queued are left alone: their next attempt is coming anyway. Any machine's API
-- may queue one while the deliverer records: the queue's key keeps one item per event.
insert into webhooks.queue (seq, event_id, app_id, due_at, kind)
select e.seq, e.event_id, e.app_id, $now::timestamptz, 'replay'
from webhooks.events as e
where e.status in (select jsonb_array_elements_text($statuses::jsonb))
  and ($event_id::text is null or e.event_id = $event_id::text)
  and ($app::text is null or e.app_id = $app::text)
  and ($since::timestamptz is null or e.created_at >= $since::timestamptz)
  and not exists (select 1 from webhooks.queue as q where q.seq = e.seq)
on conflict (seq) do nothing
returning event_id
