-- grain: one row per event, newest first, for the operator (sql/ops/webhooks/list.sql)
-- params: $app TEXT (or null for all apps), $status TEXT (or null for all), $limit INTEGER,
--         $before_seq BIGINT (the last seq of the previous page, or null for the first)
select
    e.seq, e.event_id, e.app_id, e.event_type, e.status, e.attempt_count, e.sent_attempts,
    (extract(epoch from e.created_at) * 1000)::bigint as created_ms,
    (extract(epoch from q.due_at) * 1000)::bigint as next_attempt_ms,
    q.kind as queued_kind,
    (extract(epoch from e.last_attempt_at) * 1000)::bigint as last_attempt_ms,
    e.last_status_code, e.last_error,
    (extract(epoch from e.delivered_at) * 1000)::bigint as delivered_ms,
    (extract(epoch from e.dead_at) * 1000)::bigint as dead_ms
from webhooks.events as e
left join webhooks.queue as q on q.seq = e.seq
where ($app::text is null or e.app_id = $app::text)
  and ($status::text is null or e.status = $status::text)
  and ($before_seq::bigint is null or e.seq < $before_seq::bigint)
order by e.seq desc
limit $limit::integer
