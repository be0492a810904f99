-- grain: one row per trip written in (since, version]: what the API serves of it, as a fingerprint,
--        and how it compares with what was last announced
-- reads: trips, trip_events, announced_trips
-- params: $since BIGINT, $version BIGINT
-- The fingerprint covers every field the trip list and detail answer with, as they are served (scores and
-- speeds rounded to 2 places, positions as stored, times to the microsecond), the trip's events in
-- served order, and the number of kept points (the route operation's points). A re-sent trip whose
-- fingerprint equals the announced one changes nothing a receiver can read: no event.
with changed_trips as (
    select *
    from trips
    where version > $since and version <= $version
),

events as (
    select
        e.app_id, e.trip_id,
        string_agg(
            concat_ws('|', e.type, epoch_us(e.started_at), epoch_us(e.ended_at), e.start_lat, e.start_lng, e.end_lat, e.end_lng, e.description),
            ';' order by e.started_at, e.event_index
        ) as served_events
    from trip_events as e
    semi join changed_trips as t on t.app_id = e.app_id and t.trip_id = e.trip_id
    where e.version > $since and e.version <= $version
    group by e.app_id, e.trip_id
),

fingerprinted as (
    select
        t.app_id, t.trip_id,
        md5(concat_ws('|',
            t.user_id, t.org_user_id, t.device_id, t.os, t.coordinate, t.is_auto_start, t.is_auto_end,
            epoch_us(t.started_at), epoch_us(t.ended_at), t.start_lat, t.start_lng, t.end_lat, t.end_lng,
            coalesce(t.start_poi, '<none>'), coalesce(t.end_poi, '<none>'), t.status, t.abnormal_reason,
            t.mileage_m, t.duration_s, round(t.avg_speed_kmh, 2), round(t.max_speed_kmh, 2), t.count_events,
            round(t.score, 2), t.energy_g, t.count_points, coalesce(e.served_events, '')
        )) as fingerprint
    from changed_trips as t
    left join events as e on e.app_id = t.app_id and e.trip_id = t.trip_id
)

select
    f.app_id, f.trip_id, f.fingerprint,
    a.trip_id is not null as was_announced,
    a.trip_id is not null and a.fingerprint is distinct from f.fingerprint as is_changed,
    case
        when a.trip_id is null then 0
        when a.fingerprint is distinct from f.fingerprint then coalesce(a.generation, 0) + 1
        else a.generation
    end as generation
from fingerprinted as f
left join announced_trips as a on a.app_id = f.app_id and a.trip_id = f.trip_id
