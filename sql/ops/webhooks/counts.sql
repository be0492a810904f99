-- grain: one row per app and status, with the queue's view of what is waiting
-- params: $now VARCHAR (ISO instant)
select
    e.app_id,
    e.status,
    count(*)::integer as events,
    count(q.seq) filter (where q.due_at <= $now::timestamptz)::integer as due_now,
    count(q.seq) filter (where q.kind = 'replay')::integer as replays_queued,
    epoch_ms(min(q.due_at)) as next_attempt_ms,
    epoch_ms(min(e.created_at) filter (where e.status = 'pending')) as oldest_pending_ms
from events as e
left join queue as q on q.seq = e.seq
group by e.app_id, e.status
order by e.app_id, e.status
