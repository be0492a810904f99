-- grain: one row per trip record of a range of trips, in the delivered shape (camelCase fields)
-- params: $first_trip_no BIGINT, $last_trip_no BIGINT, $app_id VARCHAR, $time_zone VARCHAR
-- Built one range (a local day) at a time: the table stays small and every write reads only it.
-- startTime/endTime are JSON scalars: an ISO string with the zone's offset, or (time_as_epoch)
-- epoch milliseconds. Points hidden by a GPS gap are left out.
create or replace temp table gen_records as
with point_lists as (
    select
        trip_no,
        list({'t': t, 'lat': lat, 'lng': lng, 'speed': speed, 'heading': heading, 'accuracy': accuracy}
             order by i) as points
    from gen_points
    where trip_no between $first_trip_no::bigint and $last_trip_no::bigint and not in_gap
    group by trip_no
),

event_lists as (
    select
        trip_no,
        list({'type': type, 'startTime': start_time, 'endTime': end_time,
              'startPoint': start_point, 'endPoint': end_point, 'description': description}
             order by i_start, type) as events
    from gen_events
    where trip_no between $first_trip_no::bigint and $last_trip_no::bigint
    group by trip_no
)

select
    t.start_ms,
    t.end_ms,
    $app_id::varchar as appId,
    t.platform_user_id as platformUserId,
    t.org_user_id as orgUserId,
    t.trip_id as tripId,
    t.device_id as deviceId,
    t.os,
    t.coordinate,
    t.is_auto_start as isAutoStart,
    t.is_auto_end as isAutoEnd,
    case when t.time_as_epoch then to_json(t.start_ms) else to_json(gen_iso(t.start_ms, $time_zone)) end as startTime,
    case when t.time_as_epoch then to_json(t.end_ms) else to_json(gen_iso(t.end_ms, $time_zone)) end as endTime,
    t.start_poi as startPoi,
    t.end_poi as endPoi,
    p.points,
    coalesce(e.events, []) as events
from gen_trips as t
join point_lists as p using (trip_no)
left join event_lists as e using (trip_no)
where t.trip_no between $first_trip_no::bigint and $last_trip_no::bigint
