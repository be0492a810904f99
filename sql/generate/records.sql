-- grain: one row per trip record of the trips numbered p_first..p_last (gen_trips, gen_points,
--        gen_events), in the delivered shape (camelCase fields)
-- A table macro (made after each part's tables, as it binds them when made): the COPY that writes
-- a day's piece reads it directly, so the records, each with its list of about 1,300 points, are
-- never stored in a table and read back. startTime/endTime are JSON scalars: an ISO string with
-- the zone's offset, or (time_as_epoch) epoch milliseconds. Points hidden by a GPS gap are left out.
create or replace temp macro gen_records(p_first, p_last, p_app_id, p_time_zone) as table
with point_lists as (
    select
        trip_no,
        list({'t': t, 'lat': lat, 'lng': lng, 'speed': speed, 'heading': heading, 'accuracy': accuracy}
             order by i) as points
    from gen_points
    where trip_no between p_first::bigint and p_last::bigint and not in_gap
    group by trip_no
),

event_lists as (
    select
        trip_no,
        list({'type': type, 'startTime': start_time, 'endTime': end_time,
              'startPoint': start_point, 'endPoint': end_point, 'description': description}
             order by i_start, type) as events
    from gen_events
    where trip_no between p_first::bigint and p_last::bigint
    group by trip_no
)

select
    t.start_ms,
    t.end_ms,
    p_app_id::varchar as appId,
    t.platform_user_id as platformUserId,
    t.org_user_id as orgUserId,
    t.trip_id as tripId,
    t.device_id as deviceId,
    t.os,
    t.coordinate,
    t.is_auto_start as isAutoStart,
    t.is_auto_end as isAutoEnd,
    case when t.time_as_epoch then to_json(t.start_ms) else to_json(gen_iso(t.start_ms, p_time_zone)) end as startTime,
    case when t.time_as_epoch then to_json(t.end_ms) else to_json(gen_iso(t.end_ms, p_time_zone)) end as endTime,
    t.start_poi as startPoi,
    t.end_poi as endPoi,
    p.points,
    coalesce(e.events, []) as events
from gen_trips as t
join point_lists as p using (trip_no)
left join event_lists as e using (trip_no)
where t.trip_no between p_first::bigint and p_last::bigint
