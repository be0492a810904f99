-- grain: one event with its state (sql/ops/webhooks/show_event.sql)
-- params: $event_id TEXT
select
    e.seq, e.event_id, e.app_id, e.event_type, e.status, e.attempt_count, e.scheduled_attempts,
    e.body, e.source_file,
    (extract(epoch from e.created_at) * 1000)::bigint as created_ms,
    (extract(epoch from e.ingested_at) * 1000)::bigint as ingested_ms,
    (extract(epoch from q.due_at) * 1000)::bigint as next_attempt_ms, q.kind as queued_kind,
    (extract(epoch from e.delivered_at) * 1000)::bigint as delivered_ms,
    (extract(epoch from e.dead_at) * 1000)::bigint as dead_ms
from webhooks.events as e
left join webhooks.queue as q on q.seq = e.seq
where e.event_id = $event_id::text
