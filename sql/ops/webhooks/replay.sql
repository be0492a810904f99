-- grain: queues one replay (a single attempt, not rescheduled) per matching event
-- params: $event_id VARCHAR (one event, or null), $app VARCHAR (or null), $since VARCHAR (ISO
--         instant, or null), $statuses VARCHAR[] (which states may be replayed), $now VARCHAR
-- Events already queued are left alone: their next attempt is coming anyway.
insert into queue
select e.seq, e.event_id, e.app_id, $now::timestamptz, 'replay'
from events as e
anti join queue as q on q.seq = e.seq
where list_contains($statuses, e.status)
  and ($event_id is null or e.event_id = $event_id)
  and ($app is null or e.app_id = $app)
  and ($since is null or e.created_at >= $since::timestamptz)
returning event_id
