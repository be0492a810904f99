-- grain: one event with its state
-- params: $event_id VARCHAR
select
    e.seq, e.event_id, e.app_id, e.event_type, e.status, e.attempt_count, e.scheduled_attempts,
    e.body, e.source_file,
    epoch_ms(e.created_at) as created_ms, epoch_ms(e.ingested_at) as ingested_ms,
    epoch_ms(q.due_at) as next_attempt_ms, q.kind as queued_kind,
    epoch_ms(e.delivered_at) as delivered_ms, epoch_ms(e.dead_at) as dead_ms
from events as e
left join queue as q on q.seq = e.seq
where e.event_id = $event_id
