-- grain: one row, how many of one event file slice's events were new; the statement takes them in
--        with their first queue item (sql/ops/webhooks/intake.sql, in PostgreSQL)
-- params: $rows TEXT (JSON array of {line_no, event_id, app_id, event_type, body, created_at}, one
--         per event id), $now TEXT (ISO instant), $source_file TEXT
-- An event id already in the outbox is left alone (ON CONFLICT DO NOTHING): a file written again
-- after a crash, or taken in by two deliverers, changes nothing. Seqs follow the file's line order.
with incoming as (
    select r.line_no, r.event_id, r.app_id, r.event_type, r.body, r.created_at
    from jsonb_to_recordset($rows::jsonb)
        as r(line_no integer, event_id text, app_id text, event_type text, body text, created_at text)
),
inserted as (
    insert into webhooks.events (event_id, app_id, event_type, body, created_at, ingested_at, source_file, status)
    select event_id, app_id, event_type, body, created_at::timestamptz, $now::timestamptz, $source_file::text, 'pending'
    from incoming
    order by line_no
    on conflict (event_id) do nothing
    returning seq, event_id, app_id
),
queued as (
    insert into webhooks.queue (seq, event_id, app_id, due_at, kind)
    select seq, event_id, app_id, $now::timestamptz, 'scheduled' from inserted
)
select count(*)::integer as taken from inserted
