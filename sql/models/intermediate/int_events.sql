-- grain: one row per delivered event of a loadable record
-- reads: stg_trip_records (the event lists), int_loadable_records
-- Marks each event with its quarantine reason (docs/decisions.md, Trip records (load)), first match wins; NULL keeps it.
-- A missing description gets the event type's wording from the interface.
with delivered as (
    select
        r.app_id,
        r.trip_id,
        r.platform_user_id_text::bigint as user_id,
        r.line_no,
        unnest(s.events) as e,
        generate_subscripts(s.events, 1) as event_index
    from int_loadable_records as r
    join stg_trip_records as s on s.line_no = r.line_no
),

typed as (
    select
        app_id,
        trip_id,
        user_id,
        line_no,
        event_index,
        e.type as type,
        parse_instant(e.startTime) as started_at,
        parse_instant(e.endTime) as ended_at,
        e.startPoint.lat as start_lat,
        e.startPoint.lng as start_lng,
        e.endPoint.lat as end_lat,
        e.endPoint.lng as end_lng,
        e.description as description,
        to_json(e)::varchar as raw
    from delivered
)

select
    *,
    case
        when started_at is null or ended_at is null
            or start_lat is null or start_lng is null or end_lat is null or end_lng is null then 'invalid_event'
        when type is null or type not in (
            'brake', 'throttle', 'corner_left', 'corner_right', 'speeding',
            'phone_call', 'phone_usage', 'night_driving', 'tired_driving') then 'unknown_event_type'
        when ended_at < started_at then 'event_time_inverted'
    end as reason,
    coalesce(description, event_type_description(type)) as description_or_default
from typed
