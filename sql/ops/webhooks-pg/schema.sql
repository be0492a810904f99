-- The webhook outbox in PostgreSQL (with DATABASE_URL), in a schema of its own beside the state
-- store's tables: the same tables as sql/ops/webhooks/schema.sql, written by every machine's
-- deliverer (intake) and API (replays), delivered by the one deliverer that holds the lease.
-- events: one row per event ever taken in; `seq` comes from an identity, in intake order.
-- queue: one row per event that still has an attempt to make (scheduled, or an operator's replay).
-- attempts: every attempt, for the operator.
create schema if not exists webhooks;

create table if not exists webhooks.events (
    seq bigint generated always as identity primary key,
    event_id text not null unique,
    app_id text not null,
    event_type text not null,
    body text not null,
    created_at timestamptz not null,
    ingested_at timestamptz not null,
    source_file text not null,
    status text not null,                           -- pending | delivered | failed | filtered
    attempt_count integer not null default 0,
    scheduled_attempts integer not null default 0,
    last_attempt_at timestamptz,
    last_status_code integer,
    last_error text,
    delivered_at timestamptz,
    dead_at timestamptz,
    sent_attempts integer not null default 0
);
create index if not exists events_app_seq on webhooks.events (app_id, seq);
create index if not exists events_status on webhooks.events (status, app_id);

create table if not exists webhooks.queue (
    seq bigint primary key,
    event_id text not null,
    app_id text not null,
    due_at timestamptz not null,
    kind text not null                              -- scheduled | replay
);
create index if not exists queue_app_due on webhooks.queue (app_id, due_at, seq);

create table if not exists webhooks.attempts (
    seq bigint not null,
    event_id text not null,
    attempt integer not null,
    kind text not null,
    started_at timestamptz not null,
    duration_ms integer not null,
    status_code integer,
    error text,
    url text not null
);
create index if not exists attempts_seq on webhooks.attempts (seq);

create table if not exists webhooks.intake_rejects (
    source_file text not null,
    line_no integer not null,
    reason text not null,
    raw text not null,
    rejected_at timestamptz not null
);
