-- grain: one row per queued attempt that is due, at most $per_app per app, oldest first
-- params: $now TEXT (ISO instant), $apps TEXT (JSON array of the apps that have a webhook URL),
--         $per_app INTEGER
-- Apps without a webhook URL are left out: their events wait in the queue until one is set.
with due as (
    select q.seq, q.app_id, q.kind, q.due_at,
           row_number() over (partition by q.app_id order by q.due_at, q.seq) as n
    from webhooks.queue as q
    where q.due_at <= $now::timestamptz
      and q.app_id in (select jsonb_array_elements_text($apps::jsonb))
)
select d.seq, e.event_id, d.app_id, d.kind, e.event_type, e.body, e.attempt_count, e.sent_attempts, e.scheduled_attempts
from due as d
join webhooks.events as e on e.seq = d.seq
where d.n <= $per_app::integer
order by d.due_at, d.seq
