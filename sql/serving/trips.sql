-- grain: one row per trip of one app in a published slot, each user's trips together, newest
--        first: the serving pack's trip section (src/serving). The JSON holds exactly the columns
--        and formatting of api/trip_list.sql and api/trip_detail.sql, and `extra` the trip's events
--        as api/trip_events.sql gives them (one array per event, in EVENT_FIELDS order of
--        src/serving/format.ts), with local times in the app's zone as of this publish (the API
--        falls back to those files when the app's zone has changed since).
-- reads: trips, trip_events
-- params: $app_id VARCHAR, $zone VARCHAR (the app's; a constant zone is twice as fast as one
--         joined per row), $buckets INTEGER, $bucket INTEGER (the users with
--         user_id % $buckets = $bucket: each build step sorts only its own users' rows)
with events as (
    select
        user_id,
        trip_id,
        -- string_agg of each event's JSON: a list() of structs held about 1.5 KB per event in its
        -- aggregate state and ran out of a 3 GB memory limit at 1.5 M events per step
        '[' || string_agg(
            '[' || to_json(type) || ',' || to_json(description) || ','
            || to_json(start_lat) || ',' || to_json(start_lng) || ','
            || to_json(end_lat) || ',' || to_json(end_lng) || ','
            || to_json(strftime(timezone($zone, started_at), '%Y-%m-%d %H:%M:%S')) || ','
            || to_json(strftime(timezone($zone, ended_at), '%Y-%m-%d %H:%M:%S')) || ']',
            ',' order by started_at, event_index
        ) || ']' as events_json
    from trip_events
    where app_id = $app_id and user_id % $buckets = $bucket
    group by user_id, trip_id
)

select
    t.user_id,
    epoch_us(t.started_at)::double as sort_key,
    t.trip_id,
    to_json({
        'trip_id': t.trip_id, 'device_id': t.device_id, 'status': t.status,
        'abnormal_reason': t.abnormal_reason, 'os': t.os, 'count_events': t.count_events,
        'score': t.score, 'energy_g': t.energy_g, 'avg_speed_kmh': t.avg_speed_kmh,
        'max_speed_kmh': t.max_speed_kmh, 'mileage_m': t.mileage_m, 'duration_s': t.duration_s,
        'coordinate': t.coordinate, 'is_auto_start': t.is_auto_start, 'is_auto_end': t.is_auto_end,
        'start_time': strftime(timezone($zone, t.started_at), '%Y-%m-%d %H:%M:%S'),
        'end_time': strftime(timezone($zone, t.ended_at), '%Y-%m-%d %H:%M:%S'),
        'started_us': epoch_us(t.started_at)::varchar,
        'start_lat': t.start_lat, 'start_lng': t.start_lng, 'end_lat': t.end_lat, 'end_lng': t.end_lng,
        'start_poi': t.start_poi, 'end_poi': t.end_poi
    })::varchar as payload,
    coalesce(ev.events_json, '[]') as extra
from trips as t
left join events as ev on ev.user_id = t.user_id and ev.trip_id = t.trip_id
where t.app_id = $app_id and t.user_id % $buckets = $bucket
order by t.user_id, t.started_at desc, t.trip_id desc
