-- grain: one trip.updated event per re-sent (or re-derived) trip whose served fingerprint differs
--        from the one last announced
-- reads: trip_fingerprints (temp, sql/ops/events/trip_fingerprints.sql), trips, apps
-- The id derives from app, trip, the update's generation and its fingerprint: a job that dies after
-- writing the events file repeats the same ids, and a trip changed back (A, B, A) gets a new one.
select
    'evt_' || md5('trip.updated|' || t.app_id || '|' || t.trip_id || '|' || f.generation || '|' || f.fingerprint) as id,
    'trip.updated' as type,
    t.app_id,
    json_object(
        'appId', t.app_id, 'orgUserId', t.org_user_id, 'userId', t.user_id, 'tripId', t.trip_id,
        'status', t.status,
        'startTime', strftime(timezone(a.time_zone, t.started_at), '%Y-%m-%d %H:%M:%S'),
        'endTime', strftime(timezone(a.time_zone, t.ended_at), '%Y-%m-%d %H:%M:%S')
    ) as data
from trip_fingerprints as f
join trips as t on t.app_id = f.app_id and t.trip_id = f.trip_id
join apps as a on a.app_id = t.app_id
where f.is_changed
order by t.app_id, t.started_at, t.trip_id
