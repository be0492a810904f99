-- grain: statements that take one event file's valid lines into the outbox, in one transaction
-- params: $rows VARCHAR (JSON array of {line_no, event_id, app_id, event_type, body, created_at},
--         one per event id: the caller keeps the first line of an id repeated within the file),
--         $now VARCHAR (ISO instant), $source_file VARCHAR
-- An event id already in the outbox is left alone (a job that re-wrote its file after a crash, or a
-- file taken in before the deliverer died), so intake is idempotent.
create or replace temp table incoming as
with parsed as (
    select unnest(
        from_json($rows, '[{"line_no":"INTEGER","event_id":"VARCHAR","app_id":"VARCHAR","event_type":"VARCHAR","body":"VARCHAR","created_at":"VARCHAR"}]'),
        recursive := true
    )
),
new_events as (
    select p.* from parsed as p
    anti join events as e on e.event_id = p.event_id
),
base as (
    select coalesce(max(seq), 0) as max_seq from events
)
select
    base.max_seq + row_number() over (order by n.line_no) as seq,
    n.event_id, n.app_id, n.event_type, n.body, n.created_at::timestamptz as created_at
from new_events as n cross join base;

insert into events
select seq, event_id, app_id, event_type, body, created_at, $now::timestamptz, $source_file,
       'pending', 0, 0, null, null, null, null, null, 0  -- the last: sent_attempts
from incoming;

insert into queue
select seq, event_id, app_id, $now::timestamptz, 'scheduled' from incoming;

select count(*)::integer as taken from incoming;
