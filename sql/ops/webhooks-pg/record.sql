-- grain: one row; the statement records a batch of finished attempts with the event states and
--        queue items they change, in one transaction (sql/ops/webhooks/record.sql, in PostgreSQL)
-- params: $rows TEXT (JSON array of {seq, event_id, attempt, sent, kind, started_at, finished_at,
--         duration_ms, status_code, error, url, outcome, next_at}); outcome is one of
--         delivered | retry (next_at set) | dead | replay_failed | filtered
-- A batch holds one attempt per event (the deliverer takes an event again only once recorded).
-- A crash before the commit leaves the attempt unrecorded and the event queued: it is sent again
-- by whichever deliverer holds the lease next (at-least-once).
with finished as (
    select *
    from jsonb_to_recordset($rows::jsonb)
        as f(seq bigint, event_id text, attempt integer, sent boolean, kind text, started_at text,
             finished_at text, duration_ms integer, status_code integer, error text, url text,
             outcome text, next_at text)
),
new_attempts as (
    insert into webhooks.attempts (seq, event_id, attempt, kind, started_at, duration_ms, status_code, error, url)
    select seq, event_id, attempt, kind, started_at::timestamptz, duration_ms, status_code, error, url
    from finished
    where outcome <> 'filtered'
),
states as (
    update webhooks.events as e set
        status = case f.outcome when 'delivered' then 'delivered' when 'retry' then 'pending'
                        when 'dead' then 'failed' when 'filtered' then 'filtered'
                        else e.status end,
        attempt_count = e.attempt_count + (f.outcome <> 'filtered')::integer,
        sent_attempts = e.sent_attempts + (f.outcome <> 'filtered' and f.sent)::integer,
        scheduled_attempts = e.scheduled_attempts + (f.kind = 'scheduled' and f.outcome <> 'filtered')::integer,
        last_attempt_at = f.started_at::timestamptz,
        last_status_code = f.status_code,
        last_error = f.error,
        delivered_at = case when f.outcome = 'delivered' then f.finished_at::timestamptz else e.delivered_at end,
        dead_at = case when f.outcome = 'dead' then f.finished_at::timestamptz
                       when f.outcome = 'delivered' then null else e.dead_at end
    from finished as f
    where e.seq = f.seq
),
retries as (
    update webhooks.queue as q set due_at = f.next_at::timestamptz
    from finished as f
    where q.seq = f.seq and f.outcome = 'retry'
),
done as (
    delete from webhooks.queue where seq in (select seq from finished where outcome <> 'retry')
)
select count(*)::integer as recorded from finished
