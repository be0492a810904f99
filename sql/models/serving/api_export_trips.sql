-- grain: one row per trip of one app, oldest first: one batch of the bulk export (its events:
--        models/serving/api_export_events.sql, within the batch's first start and last end: `*_utc`)
-- params: $app_id VARCHAR, $zone VARCHAR, $to TIMESTAMPTZ (exclusive end of the start times),
--         $excluded_users VARCHAR (JSON array of deleted user ids, never exported), $after_at
--         TIMESTAMPTZ (inclusive: the range's start for the first batch, then the start of the
--         previous batch's last row), $after_trip VARCHAR (that row's trip id), $first BOOLEAN
--         (no previous batch yet), $limit INTEGER
-- Keyset on (start, trip id), trip ids being unique within the app. `started_at >= $after_at` is
-- a plain range on the column, which DuckDB checks against each row group's min/max and skips
-- the groups that end before it; the tie on equal starts is settled by the trip id after it.
with page as (
    select *
    from trips
    where app_id = $app_id
        and started_at >= $after_at::timestamptz and started_at < $to::timestamptz
        and ($first::boolean or started_at > $after_at::timestamptz or trip_id > $after_trip)
        and not list_contains(from_json($excluded_users, '["BIGINT"]'), user_id)
    order by started_at, trip_id
    limit $limit
),

final as (
    select
        p.trip_id, p.user_id, p.org_user_id, p.device_id, p.os, p.status, p.abnormal_reason,
        p.count_events, p.score, p.energy_g, p.mileage_m, p.duration_s, p.avg_speed_kmh, p.max_speed_kmh,
        p.coordinate, p.is_auto_start, p.is_auto_end,
        strftime(timezone($zone, p.started_at), '%Y-%m-%d %H:%M:%S') as start_time,
        strftime(timezone($zone, p.ended_at), '%Y-%m-%d %H:%M:%S') as end_time,
        strftime(p.started_at, '%Y-%m-%d %H:%M:%S.%f+00') as started_utc,
        strftime(p.ended_at, '%Y-%m-%d %H:%M:%S.%f+00') as ended_utc,
        p.start_lat, p.start_lng, p.end_lat, p.end_lng, p.start_poi, p.end_poi,
        p.started_at
    from page as p
)

select * exclude (started_at) from final
order by started_at, trip_id
