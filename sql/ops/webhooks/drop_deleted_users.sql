-- grain: statements that drop, inside an intake's transaction, every event of the users that intake
--        announced deleted (user.deleted), other than their user.deleted, with its queue entries
--        and attempts: delivered or not (docs/decisions.md, Deletion: erasure reaches the bytes, whatever the
--        retention of the webhook rules keeps)
-- reads: incoming (the intake's new events, sql/ops/webhooks/intake.sql), events
-- The user is matched by app and data.userId, the platform user id every event of a user carries.
create or replace temp table deleted_users as
select distinct app_id, json_extract_string(body, '$.data.userId') as user_id
from incoming
where event_type = 'user.deleted';

create or replace temp table dropped_events as
select e.event_id
from events as e
join deleted_users as d on d.app_id = e.app_id and json_extract_string(e.body, '$.data.userId') = d.user_id
where e.event_type <> 'user.deleted';

delete from queue where event_id in (select event_id from dropped_events);
delete from attempts where event_id in (select event_id from dropped_events);
delete from events where event_id in (select event_id from dropped_events);

select count(*)::integer as dropped from dropped_events;
