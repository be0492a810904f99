-- grain: statements that forget events finished more than the retention ago, in one transaction
-- params: $before VARCHAR (ISO instant: delivered or dead before this are removed)
-- Pending events are never removed, whatever their age.
create or replace temp table pruned as
select seq from events
where (status = 'delivered' and delivered_at < $before::timestamptz)
   or (status = 'failed' and dead_at < $before::timestamptz)
except
select seq from queue;

delete from attempts where seq in (select seq from pruned);

delete from events where seq in (select seq from pruned);

select count(*)::bigint as pruned from pruned;
