-- grain: one row per trip of a published slot, each user's trips together, newest first: the
--        serving pack's trip section (src/serving). The JSON holds exactly the columns and the
--        formatting of api/trip_list.sql, api/trip_detail.sql and api/trip_events.sql, with local
--        times in the app's zone as of this publish (the API falls back to those files when an
--        app's zone has changed since).
-- reads: trips, trip_events, serving_zones (temp: app_id, time_zone)
-- params: $buckets INTEGER, $bucket INTEGER: the users with user_id % $buckets = $bucket, so the
--         sort and the events' lists of one build step fit in memory whatever the history
with events as (
    select
        e.app_id,
        e.user_id,
        e.trip_id,
        to_json(list({
            'type': e.type, 'description': e.description,
            'start_lat': e.start_lat, 'start_lng': e.start_lng, 'end_lat': e.end_lat, 'end_lng': e.end_lng,
            'start_time': strftime(timezone(z.time_zone, e.started_at), '%Y-%m-%d %H:%M:%S'),
            'end_time': strftime(timezone(z.time_zone, e.ended_at), '%Y-%m-%d %H:%M:%S')
        } order by e.started_at, e.event_index))::varchar as events_json
    from trip_events as e
    join serving_zones as z on z.app_id = e.app_id
    where e.user_id % $buckets = $bucket
    group by e.app_id, e.user_id, e.trip_id
)

select
    t.app_id,
    t.user_id,
    epoch_us(t.started_at)::double as sort_key,
    t.trip_id,
    to_json({
        'trip_id': t.trip_id, 'device_id': t.device_id, 'status': t.status,
        'abnormal_reason': t.abnormal_reason, 'os': t.os, 'count_events': t.count_events,
        'score': t.score, 'energy_g': t.energy_g, 'avg_speed_kmh': t.avg_speed_kmh,
        'max_speed_kmh': t.max_speed_kmh, 'mileage_m': t.mileage_m, 'duration_s': t.duration_s,
        'coordinate': t.coordinate, 'is_auto_start': t.is_auto_start, 'is_auto_end': t.is_auto_end,
        'start_time': strftime(timezone(z.time_zone, t.started_at), '%Y-%m-%d %H:%M:%S'),
        'end_time': strftime(timezone(z.time_zone, t.ended_at), '%Y-%m-%d %H:%M:%S'),
        'started_us': epoch_us(t.started_at)::varchar,
        'start_lat': t.start_lat, 'start_lng': t.start_lng, 'end_lat': t.end_lat, 'end_lng': t.end_lng,
        'start_poi': t.start_poi, 'end_poi': t.end_poi
    })::varchar as payload,
    coalesce(ev.events_json, '[]') as extra
from trips as t
join serving_zones as z on z.app_id = t.app_id
left join events as ev on ev.app_id = t.app_id and ev.user_id = t.user_id and ev.trip_id = t.trip_id
where t.user_id % $buckets = $bucket
order by t.app_id, t.user_id, t.started_at desc, t.trip_id desc
