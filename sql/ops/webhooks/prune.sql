-- grain: statements that forget events finished more than the retention ago, in one transaction
-- params: $before VARCHAR (ISO instant: delivered, dead or filtered before this are removed),
--         $endpoint_apps VARCHAR (JSON array of the apps with an enabled endpoint; may be empty)
-- Pending events are kept while their app has an endpoint, whatever their age; those of an app
-- without one (none set, or disabled) are kept for the retention from their creation, then
-- dropped with their queue item (docs/decisions.md, Webhooks (delivery): 30 days).
create or replace temp table pruned as
(
    select seq from events
    where (status = 'delivered' and delivered_at < $before::timestamptz)
       or (status = 'failed' and dead_at < $before::timestamptz)
       or (status = 'filtered' and last_attempt_at < $before::timestamptz)
    except
    select seq from queue
)
union
select seq from events
where status = 'pending' and not list_contains(from_json($endpoint_apps, '["VARCHAR"]'), app_id) and created_at < $before::timestamptz;

delete from queue where seq in (select seq from pruned);

delete from attempts where seq in (select seq from pruned);

delete from events where seq in (select seq from pruned);

select count(*)::bigint as pruned from pruned;
