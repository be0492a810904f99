-- grain: one row per trip of one app, oldest first: one batch of the bulk export, with the
--        trip's events as a list in served order
-- params: $app_id VARCHAR, $zone VARCHAR, $from TIMESTAMPTZ (inclusive), $to TIMESTAMPTZ
--         (exclusive) bounds of the start time, $excluded_users VARCHAR (JSON array of deleted
--         user ids, never exported), $after_us BIGINT, $after_user BIGINT, $after_trip VARCHAR
--         (keyset: the last row of the previous batch), $limit INTEGER
with page as (
    select *
    from trips
    where app_id = $app_id
        and started_at >= $from::timestamptz and started_at < $to::timestamptz
        and not list_contains(from_json($excluded_users, '["BIGINT"]'), user_id)
        and (epoch_us(started_at) > $after_us
            or (epoch_us(started_at) = $after_us and (user_id > $after_user
                or (user_id = $after_user and trip_id > $after_trip))))
    order by started_at, user_id, trip_id
    limit $limit
),

page_events as (
    select
        e.user_id, e.trip_id,
        list(struct_pack(
            type := e.type, description := e.description,
            start_lat := e.start_lat, start_lng := e.start_lng, end_lat := e.end_lat, end_lng := e.end_lng,
            start_time := strftime(timezone($zone, e.started_at), '%Y-%m-%d %H:%M:%S'),
            end_time := strftime(timezone($zone, e.ended_at), '%Y-%m-%d %H:%M:%S')
        ) order by e.started_at, e.event_index) as events
    from trip_events as e
    semi join page as p on e.user_id = p.user_id and e.trip_id = p.trip_id
    where e.app_id = $app_id
    group by e.user_id, e.trip_id
),

final as (
    select
        p.trip_id, p.user_id, p.org_user_id, p.device_id, p.os, p.status, p.abnormal_reason,
        p.count_events, p.score, p.energy_g, p.mileage_m, p.duration_s, p.avg_speed_kmh, p.max_speed_kmh,
        p.coordinate, p.is_auto_start, p.is_auto_end,
        strftime(timezone($zone, p.started_at), '%Y-%m-%d %H:%M:%S') as start_time,
        strftime(timezone($zone, p.ended_at), '%Y-%m-%d %H:%M:%S') as end_time,
        epoch_us(p.started_at)::varchar as started_us,
        p.start_lat, p.start_lng, p.end_lat, p.end_lng, p.start_poi, p.end_poi,
        coalesce(pe.events, []) as events,
        p.started_at
    from page as p
    left join page_events as pe on pe.user_id = p.user_id and pe.trip_id = p.trip_id
)

select * exclude (started_at) from final
order by started_at, user_id, trip_id
