-- grain: one line of the pending events file per event (docs/webhooks.md, the envelope), in the
--        order the events were inserted into event_rows (sql/ops/events/event_rows.sql)
-- reads: event_rows (temp)
-- params: $envelope VARCHAR (the envelope's version), $created_at VARCHAR (ISO 8601, UTC)
-- DuckDB writes the file itself (COPY), so the events never pass through the client one string at
-- a time. The keys in the order JSON.stringify of the envelope gave, with the text it gave (js_json).
select js_json(json_object(
    'id', id, 'type', type, 'version', $envelope, 'createdAt', $created_at, 'appId', app_id, 'data', data
)::varchar) as line
from event_rows
