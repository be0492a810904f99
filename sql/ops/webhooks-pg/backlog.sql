-- grain: one row, the app's events waiting to be sent of the types its endpoint takes
-- params: $app TEXT, $types TEXT (JSON array of the endpoint's event types; empty: every type)
select count(*)::bigint as backlog
from webhooks.events
where app_id = $app::text
  and status = 'pending'
  and ($types::jsonb = '[]'::jsonb or event_type in (select jsonb_array_elements_text($types::jsonb)))
