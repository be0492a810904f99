-- grain: one row per event, newest first, for the operator
-- params: $app VARCHAR (or null for all apps), $status VARCHAR (pending | failed | delivered, or
--         null for all), $limit INTEGER, $before_seq BIGINT (the last seq of the previous page,
--         or null for the first)
select
    e.seq, e.event_id, e.app_id, e.event_type, e.status, e.attempt_count, e.sent_attempts,
    epoch_ms(e.created_at) as created_ms,
    epoch_ms(q.due_at) as next_attempt_ms,
    q.kind as queued_kind,
    epoch_ms(e.last_attempt_at) as last_attempt_ms,
    e.last_status_code, e.last_error,
    epoch_ms(e.delivered_at) as delivered_ms,
    epoch_ms(e.dead_at) as dead_ms
from events as e
left join queue as q on q.seq = e.seq
where ($app is null or e.app_id = $app)
  and ($status is null or e.status = $status)
  and ($before_seq is null or e.seq < $before_seq)
order by e.seq desc
limit $limit
