-- The webhook outbox: owned by the deliverer (jobs/deliver.js), the only process that writes it.
-- events: one row per event ever taken in, with its delivery state; `seq` is assigned in intake
--   order, so the rows a flush touches (recent seqs) are found by zonemaps, not by a scan.
-- queue: the work items, one per event that still has an attempt to make (a scheduled attempt
--   or an operator's replay). An event leaves the queue in the same transaction that records its
--   final outcome, so "recorded" and "queued" can never disagree.
-- attempts: every attempt, for the operator (time, status code or error, duration).
create table if not exists events (
    seq bigint not null,
    event_id varchar not null,
    app_id varchar not null,
    event_type varchar not null,
    body varchar not null,
    created_at timestamptz not null,
    ingested_at timestamptz not null,
    source_file varchar not null,
    status varchar not null,               -- pending | delivered | failed (dead letter)
    attempt_count integer not null,        -- every attempt, scheduled and replayed
    scheduled_attempts integer not null,   -- attempts of the retry schedule (1 + retries)
    last_attempt_at timestamptz,
    last_status_code integer,
    last_error varchar,
    delivered_at timestamptz,
    dead_at timestamptz
);

create table if not exists queue (
    seq bigint primary key,
    event_id varchar not null,
    app_id varchar not null,
    due_at timestamptz not null,
    kind varchar not null                  -- scheduled | replay
);

create table if not exists attempts (
    seq bigint not null,
    event_id varchar not null,
    attempt integer not null,              -- the event's n-th attempt (X-Delivery-Attempt counts only those sent)
    kind varchar not null,                 -- scheduled | replay
    started_at timestamptz not null,
    duration_ms integer not null,
    status_code integer,
    error varchar,
    url varchar not null
);

-- lines of event files that could not be taken in, with their reason (nothing is dropped silently)
create table if not exists intake_rejects (
    source_file varchar not null,
    line_no integer not null,
    reason varchar not null,
    raw varchar not null,
    rejected_at timestamptz not null
);

-- attempts actually sent (X-Delivery-Attempt counts these): an attempt the breaker failed
-- without sending counts in attempt_count only. Outboxes made before it count every attempt.
alter table events add column if not exists sent_attempts integer;
update events set sent_attempts = attempt_count where sent_attempts is null;
