-- grain: one row, the app's events waiting to be sent (kept while it had no endpoint, or awaiting
--        a retry) of the types its endpoint takes
-- params: $app VARCHAR, $types VARCHAR (JSON array of the endpoint's event types; empty: every
--         type; JSON text, as an empty list parameter has no type DuckDB can bind)
select count(*)::bigint as backlog
from events
where app_id = $app
  and status = 'pending'
  and (json_array_length($types) = 0 or list_contains(from_json($types, '["VARCHAR"]'), event_type))
