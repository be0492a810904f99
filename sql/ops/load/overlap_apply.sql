-- Writes what ops/load/overlap_judge.sql found changed (run only when it found a trip): the
-- trips' new status and the file's version on them and their events, the file report's copy, and
-- their user-days to the statistics the merge recomputes.
-- reads: overlap_judged, scope_user_days; writes: trips, trip_events, int_trips (the file report),
--        overlap_changed_days, stats_daily, scope_user_days
-- params: $version BIGINT
update trips as t
set
    abnormal_reason = j.abnormal_reason,
    status = case when j.abnormal_reason = '' then 'normal' else 'abnormal' end,
    is_normal = j.abnormal_reason = '',
    version = $version
from overlap_judged as j
where t.app_id = j.app_id and t.trip_id = j.trip_id;

-- a trip's events carry its version (sql/ops/publish/apply/insert_trips.sql copies a changed trip's
-- events by it): the re-judged trip's events go with it, or the publish would drop them
update trip_events as e
set version = $version
from overlap_judged as j
where e.app_id = j.app_id and e.trip_id = j.trip_id;

update int_trips as n
set
    abnormal_reason = j.abnormal_reason,
    status = case when j.abnormal_reason = '' then 'normal' else 'abnormal' end,
    is_normal = j.abnormal_reason = ''
from overlap_judged as j
where n.app_id = j.app_id and n.trip_id = j.trip_id;

-- the user-days whose statistics the change moves, beyond those the merge already recomputes
create or replace temp table overlap_changed_days as
select distinct app_id, user_id, trip_date from overlap_judged
except
select app_id, user_id, trip_date from scope_user_days;

delete from stats_daily as s using overlap_changed_days as d
where s.app_id = d.app_id and s.user_id = d.user_id and s.stat_date = d.trip_date;

insert into scope_user_days select * from overlap_changed_days;
