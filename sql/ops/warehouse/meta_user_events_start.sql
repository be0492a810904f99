-- user.deleted events start with the warehouse that first knows them: purges done before are not
-- announced (a new warehouse starts at 0). Adds 'user_events_version' at the warehouse's version,
-- once.
-- writes: meta
insert into meta select 'user_events_version', value from meta where key = 'version' on conflict do nothing
