-- grain: one row, how many events it dropped: inside an intake's transaction, every event of the
--        users a slice announced deleted (user.deleted), other than their user.deleted, with its
--        queue item and attempts, delivered or not (sql/ops/webhooks/drop_deleted_users.sql)
-- params: $rows TEXT (the slice's JSON array, as intake.sql takes it)
-- The user is matched by app and data.userId, the platform user id every event of a user carries.
with deleted_users as (
    select distinct r.app_id, (r.body::jsonb -> 'data' ->> 'userId') as user_id
    from jsonb_to_recordset($rows::jsonb) as r(app_id text, event_type text, body text)
    where r.event_type = 'user.deleted'
),
dropped as (
    select e.seq
    from webhooks.events as e
    join deleted_users as d on d.app_id = e.app_id and (e.body::jsonb -> 'data' ->> 'userId') = d.user_id
    where e.event_type <> 'user.deleted'
),
from_queue as (delete from webhooks.queue where seq in (select seq from dropped)),
from_attempts as (delete from webhooks.attempts where seq in (select seq from dropped)),
from_events as (delete from webhooks.events where seq in (select seq from dropped) returning seq)
select count(*)::integer as dropped from from_events
