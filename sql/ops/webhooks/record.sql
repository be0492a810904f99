-- grain: statements that record a batch of finished attempts, in one transaction
-- params: $rows VARCHAR (JSON array of {seq, event_id, attempt, sent, kind, started_at, finished_at,
--         duration_ms, status_code, error, url, outcome, next_at}); outcome is one of
--         delivered | retry (next_at set) | dead | replay_failed (a replay is tried once) |
--         filtered (the endpoint does not take this event type: not sent, no attempt recorded)
-- `sent` is false for an attempt the breaker failed without sending: it follows the schedule but
-- does not count in sent_attempts (the X-Delivery-Attempt of the next one).
-- The attempt, the event's state and its queue item change together: a crash before the commit
-- leaves the attempt unrecorded and the event queued, so it is sent again (at-least-once).
create or replace temp table finished as
select unnest(
    from_json($rows, '[{"seq":"BIGINT","event_id":"VARCHAR","attempt":"INTEGER","sent":"BOOLEAN","kind":"VARCHAR","started_at":"VARCHAR","finished_at":"VARCHAR","duration_ms":"INTEGER","status_code":"INTEGER","error":"VARCHAR","url":"VARCHAR","outcome":"VARCHAR","next_at":"VARCHAR"}]'),
    recursive := true
);

insert into attempts
select seq, event_id, attempt, kind, started_at::timestamptz, duration_ms, status_code, error, url
from finished
where outcome <> 'filtered';

update events as e set
    status = case f.outcome when 'delivered' then 'delivered' when 'retry' then 'pending'
                    when 'dead' then 'failed' when 'filtered' then 'filtered'
                    else e.status end,  -- a failed replay leaves the state as it was
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
where e.seq = f.seq;

update queue as q set due_at = f.next_at::timestamptz
from finished as f
where q.seq = f.seq and f.outcome = 'retry';

delete from queue where seq in (select seq from finished where outcome <> 'retry');
