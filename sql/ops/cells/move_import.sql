-- A moved driver's package imported into the target warehouse (src/cells/move-import.ts), in the
-- load's transaction with a new version: trips the target does not hold (one it holds came from a
-- newer upload since the move, and wins), their events, the statistics of every day of the
-- package recomputed from the trips now held, scores of dates and windows the target has not
-- scored itself, what the events announced (so nothing is announced again), the purge's index of
-- the trips' loaded files, and no mark left of an earlier move of the driver away from this cell.
-- reads: move_in_trips, move_in_trip_events, move_in_stats_daily, move_in_safety_scores,
--        move_in_announced_trips, move_in_announced_scores (the package's files)
-- params: $version BIGINT, $batch_id BIGINT, $app_id, $user_id
create or replace temp table move_new_trips as
select m.* from move_in_trips as m
anti join trips as t on t.app_id = m.app_id and t.trip_id = m.trip_id;

insert into trips by name
select * replace ($version::bigint as version, $batch_id::bigint as batch_id) from move_new_trips;

insert into trip_events by name
select e.* replace ($version::bigint as version)
from move_in_trip_events as e
semi join move_new_trips as t on t.app_id = e.app_id and t.trip_id = e.trip_id;

create or replace temp table scope_user_days as
select distinct app_id, user_id, stat_date as trip_date from move_in_stats_daily
union
select distinct app_id, user_id, trip_date from move_new_trips;

delete from stats_daily as s using scope_user_days as d
where s.app_id = d.app_id and s.user_id = d.user_id and s.stat_date = d.trip_date;

insert into safety_scores by name
select m.* replace ($version::bigint as version)
from move_in_safety_scores as m
anti join safety_scores as s
    on s.app_id = m.app_id and s.user_id = m.user_id
    and s.evaluation_date = m.evaluation_date and s.interval_days = m.interval_days;

insert into announced_trips by name
select a.* from move_in_announced_trips as a
semi join move_new_trips as t on t.app_id = a.app_id and t.trip_id = a.trip_id
anti join announced_trips as b on b.app_id = a.app_id and b.trip_id = a.trip_id;

insert into announced_scores by name
select a.* from move_in_announced_scores as a
anti join announced_scores as b
    on b.app_id = a.app_id and b.user_id = a.user_id and b.evaluation_date = a.evaluation_date;

insert into file_drivers (file_key, trip_date, app_id, user_id, org_user_id)
select distinct file_key, trip_date, app_id, user_id, org_user_id from move_new_trips;

insert into indexed_files (file_key, archive_day, archive_name)
select distinct t.file_key, null::date, null::varchar from move_new_trips as t
anti join indexed_files as i on i.file_key = t.file_key;

delete from purged_users where app_id = $app_id and user_id = $user_id and moved;
