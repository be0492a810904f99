-- grain: one trip.created event per published trip never announced before
-- reads: trips, announced_trips, apps
-- params: $since BIGINT (every trip written up to this version has been announced or skipped as
--         announced: the newest announced_version), $version BIGINT (the published version: only
--         trips the API now serves)
-- The event id is derived from app and trip, so a re-run after a crash repeats the same id. Only
-- trips written after $since are looked at: an anti join over every trip of the history would
-- make every run's cost grow with the history (a re-sent trip is newer than $since and found
-- announced here). `not exists`, not `anti join`: DuckDB builds an anti join's hash table from
-- every announced trip, while the subquery is answered for the few trips written.
select
    'evt_' || md5('trip.created|' || t.app_id || '|' || t.trip_id) as id,
    'trip.created' as type,
    t.app_id,
    json_object(
        'appId', t.app_id, 'orgUserId', t.org_user_id, 'userId', t.user_id, 'tripId', t.trip_id,
        'status', t.status,
        'startTime', strftime(timezone(a.time_zone, t.started_at), '%Y-%m-%d %H:%M:%S'),
        'endTime', strftime(timezone(a.time_zone, t.ended_at), '%Y-%m-%d %H:%M:%S')
    ) as data
from trips as t
join apps as a on a.app_id = t.app_id
where t.version > $since and t.version <= $version
    and not exists (select 1 from announced_trips as n where n.app_id = t.app_id and n.trip_id = t.trip_id)
order by t.app_id, t.started_at, t.trip_id
