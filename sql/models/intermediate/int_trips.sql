-- grain: one row per trip loaded from one input file (the last line of each tripId)
-- reads: int_loadable_records, int_trip_point_metrics, int_events, int_trip_distraction,
--        int_trip_time_factors, int_trip_content
-- params: $loaded_at TIMESTAMPTZ, $source_file VARCHAR, $file_key VARCHAR
-- The batch and version are given at merge time (files are derived ahead of their turn).
-- Derives the trip fields of docs/decisions.md, Trip records (load) and the status of docs/decisions.md, Trip records (load) (first rule that matches).
with event_totals as (
    select
        app_id,
        trip_id,
        count(*) as count_events,
        sum(trip_event_weight(type)) as risk,
        count(*) filter (where type in ('brake', 'throttle')) as harsh_events
    from int_events
    where reason is null
    group by app_id, trip_id
),

joined as (
    select
        r.app_id,
        r.trip_id,
        r.platform_user_id_text::bigint as user_id,
        r.org_user_id,
        r.device_id,
        r.os,
        r.coordinate,
        r.is_auto_start,
        r.is_auto_end,
        r.started_at,
        r.ended_at,
        timezone(r.time_zone, r.started_at)::date as trip_date,
        m.start_lat, m.start_lng, m.end_lat, m.end_lng,
        r.start_poi,
        r.end_poi,
        cast(round(epoch(r.ended_at) - epoch(r.started_at)) as bigint) as duration_s,
        greatest(epoch(r.ended_at) - epoch(r.started_at), 0) as elapsed_seconds,
        cast(round(coalesce(m.distance_m, 0)) as bigint) as mileage_m,
        coalesce(m.max_speed_kmh, 0) as max_speed_kmh,
        coalesce(m.has_implausible_interval, false) as has_implausible_interval,
        coalesce(m.driving_distance_m, 0) as driving_distance_m,
        coalesce(m.reported_distance_m, 0) as reported_distance_m,
        coalesce(m.count_points, 0) as count_points,
        coalesce(e.count_events, 0) as count_events,
        coalesce(e.risk, 0) as risk,
        coalesce(e.harsh_events, 0) as harsh_events,
        coalesce(m.driving_seconds, 0) as driving_seconds,
        coalesce(m.low_speed_seconds, 0) as low_speed_seconds,
        coalesce(m.acc_over_1_seconds, 0) as acc_over_1_seconds,
        coalesce(d.distracted_seconds, 0) as distracted_seconds,
        coalesce(f.evening_rush_seconds, 0) as evening_rush_seconds,
        coalesce(f.weekday_seconds, 0) as weekday_seconds,
        c.content_hash,
        r.line_no
    from int_loadable_records as r
    left join int_trip_point_metrics as m on m.line_no = r.line_no
    left join event_totals as e on e.app_id = r.app_id and e.trip_id = r.trip_id
    left join int_trip_distraction as d on d.app_id = r.app_id and d.trip_id = r.trip_id
    left join int_trip_time_factors as f on f.app_id = r.app_id and f.trip_id = r.trip_id
    left join int_trip_content as c on c.line_no = r.line_no
),

classified as (
    select
        *,
        case
            when ended_at <= started_at then 'time_inverted'
            when count_points < 2 then 'too_few_points'
            -- a reported speed, or a jump between two kept points, faster than 250 km/h
            when max_speed_kmh > 250 or has_implausible_interval then 'speed_implausible'
            -- the reported speeds do not describe the positions (a D_rep of 0 counts as outside)
            when driving_distance_m + reported_distance_m >= 2000
                and (reported_distance_m = 0 or driving_distance_m / reported_distance_m not between 0.5 and 2)
                then 'speed_inconsistent'
            when duration_s < 60 or mileage_m < 100 then 'too_short'
            else ''
        end as abnormal_reason
    from joined
),

final as (
    select
        app_id, trip_id, user_id, org_user_id, device_id, os, coordinate,
        is_auto_start, is_auto_end, started_at, ended_at, trip_date,
        start_lat, start_lng, end_lat, end_lng, start_poi, end_poi,
        case when abnormal_reason = '' then 'normal' else 'abnormal' end as status,
        abnormal_reason,
        abnormal_reason = '' as is_normal,
        mileage_m,
        duration_s,
        elapsed_seconds,
        case when duration_s > 0 then mileage_m / duration_s * 3.6 else 0 end as avg_speed_kmh,
        max_speed_kmh,
        count_events,
        count_points,
        trip_score(risk, mileage_m) as score,
        energy_grams(mileage_m, harsh_events) as energy_g,
        driving_seconds, low_speed_seconds, acc_over_1_seconds,
        distracted_seconds, evening_rush_seconds, weekday_seconds,
        trip_score_model_version() || '+' || energy_model_version() as model_version,
        content_hash,
        $source_file as source_file,
        line_no as source_line,
        $file_key as file_key,
        $loaded_at as loaded_at
    from classified
)

select * from final
