-- grain: one row, the app's events waiting to be sent (kept while it had no endpoint, or awaiting
--        a retry) of the types its endpoint takes
-- params: $app VARCHAR, $types VARCHAR[] (the endpoint's event types; empty: every type)
select count(*)::bigint as backlog
from events
where app_id = $app
  and status = 'pending'
  and (len($types) = 0 or list_contains($types, event_type))
