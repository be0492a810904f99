-- grain: one row per app and status, with the queue's view of what is waiting
-- params: $now TEXT (ISO instant)
select
    e.app_id,
    e.status,
    count(*)::integer as events,
    (count(q.seq) filter (where q.due_at <= $now::timestamptz))::integer as due_now,
    (count(q.seq) filter (where q.kind = 'replay'))::integer as replays_queued,
    (extract(epoch from min(q.due_at)) * 1000)::bigint as next_attempt_ms,
    (extract(epoch from min(e.created_at) filter (where e.status = 'pending')) * 1000)::bigint as oldest_pending_ms
from webhooks.events as e
left join webhooks.queue as q on q.seq = e.seq
group by e.app_id, e.status
order by e.app_id, e.status
