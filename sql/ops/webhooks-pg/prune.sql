-- grain: one row, how many events it forgot: those finished more than the retention ago, and the
--        pending ones of apps without an endpoint created before it (sql/ops/webhooks/prune.sql)
-- params: $before TEXT (ISO instant), $endpoint_apps TEXT (JSON array of the apps with an enabled
--         endpoint; may be empty)
with pruned as (
    (
        select seq from webhooks.events
        where (status = 'delivered' and delivered_at < $before::timestamptz)
           or (status = 'failed' and dead_at < $before::timestamptz)
           or (status = 'filtered' and last_attempt_at < $before::timestamptz)
        except
        select seq from webhooks.queue
    )
    union
    select seq from webhooks.events
    where status = 'pending'
      and app_id not in (select jsonb_array_elements_text($endpoint_apps::jsonb))
      and created_at < $before::timestamptz
),
from_queue as (delete from webhooks.queue where seq in (select seq from pruned)),
from_attempts as (delete from webhooks.attempts where seq in (select seq from pruned)),
from_events as (delete from webhooks.events where seq in (select seq from pruned) returning seq)
select count(*)::bigint as pruned from from_events
