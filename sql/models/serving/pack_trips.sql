-- grain: one row per trip of one app in a published slot, each user's trips together, newest
--        first: the serving pack's trip section (src/serving). The payload holds exactly the
--        columns and formatting of models/serving/api_trip_list.sql and models/serving/api_trip_detail.sql (an array in
--        TRIP_FIELDS order of src/serving/format.ts), and `extra` the trip's events as
--        models/serving/api_trip_events.sql gives them (one array per event, in EVENT_FIELDS order), with local
--        times in the app's zone as of this publish (the API falls back to those files when the
--        app's zone has changed since).
-- reads: trips, trip_events
-- params: $app_id VARCHAR, $zone VARCHAR (the app's; a constant zone costs much less than one
--         joined per row), $buckets INTEGER, $bucket INTEGER (the users with
--         user_id % $buckets = $bucket: each build step sorts only its own users' rows),
--         $since BIGINT (only trips written after that version, for a delta layer; -1: all. A
--         trip's events carry its version: a re-sent trip replaces them whole)
with events as (
    select
        user_id,
        trip_id,
        -- string_agg of each event's JSON: a list() of structs holds far more per event in its
        -- aggregate state, and a large step's events then do not fit in the memory limit
        '[' || string_agg(
            json_array(
                type, description, start_lat, start_lng, end_lat, end_lng,
                strftime(timezone($zone, started_at), '%Y-%m-%d %H:%M:%S'),
                strftime(timezone($zone, ended_at), '%Y-%m-%d %H:%M:%S')
            )::varchar,
            ',' order by started_at, event_index
        ) || ']' as events_json
    from trip_events as e
    where app_id = $app_id and user_id % $buckets = $bucket and version > $since
    group by user_id, trip_id
)

select
    t.user_id,
    epoch_us(t.started_at)::double as sort_key,
    t.trip_id,
    -- an array in TRIP_FIELDS order (src/serving/format.ts): half the bytes of an object
    json_array(
        t.trip_id, t.device_id, t.status, t.abnormal_reason, t.os, t.count_events, t.score, t.energy_g,
        t.avg_speed_kmh, t.max_speed_kmh, t.mileage_m, t.duration_s, t.coordinate, t.is_auto_start,
        t.is_auto_end,
        strftime(timezone($zone, t.started_at), '%Y-%m-%d %H:%M:%S'),
        strftime(timezone($zone, t.ended_at), '%Y-%m-%d %H:%M:%S'),
        epoch_us(t.started_at)::varchar,
        t.start_lat, t.start_lng, t.end_lat, t.end_lng, t.start_poi, t.end_poi
    )::varchar as payload,
    coalesce(ev.events_json, '[]') as extra
from trips as t
left join events as ev on ev.user_id = t.user_id and ev.trip_id = t.trip_id
where t.app_id = $app_id and t.user_id % $buckets = $bucket and t.version > $since
order by t.user_id, t.started_at desc, t.trip_id desc
