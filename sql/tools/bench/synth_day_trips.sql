-- grain: one row per synthesized trip of every synthesized user on one local day
-- reads: synth_users
-- params: $day DATE, $time_zone VARCHAR, $seed BIGINT
-- Trips-only history: the per-trip fields and factor seconds the load would have derived from
-- points, drawn with the generator's shapes (about 1.5 trips per user per day, commutes on
-- weekdays, leisure on weekends, a few night trips, 2 % too short, about 6.5 events per trip).
-- The event types are kept as a list so the trip score and the trip_events rows agree.
create or replace temp table synth_day_trips as
with slots (slot_no, slot, p_weekday, p_weekend, from_sec, window_sec, min_dur, max_dur) as (
    values
        (1, 'am',                0.72, 0.00,  7 * 3600,  90 * 60,  8 * 60, 35 * 60),
        (2, 'errand',            0.12, 0.00, 10 * 3600, 330 * 60,  5 * 60, 30 * 60),
        (3, 'pm',                0.62, 0.00, 17 * 3600, 120 * 60, 10 * 60, 40 * 60),
        (4, 'leisure_morning',   0.00, 0.60,  9 * 3600, 150 * 60, 10 * 60, 60 * 60),
        (5, 'leisure_afternoon', 0.00, 0.50, 13 * 3600, 180 * 60,  5 * 60, 60 * 60),
        (6, 'leisure_evening',   0.00, 0.30, 17 * 3600 + 1800, 150 * 60, 10 * 60, 50 * 60),
        (7, 'night_late',        0.04, 0.08, 22 * 3600, 119 * 60,  6 * 60, 60 * 60),
        (8, 'night_early',       0.03, 0.05,  5400,     150 * 60,  5 * 60, 40 * 60)
),

candidates as (
    select
        u.*,
        s.*,
        hash($seed::bigint, u.user_id, $day::date, s.slot_no) as trip_key,
        isodow($day::date) >= 6 as is_weekend
    from synth_users as u
    cross join slots as s
),

chosen as (
    select *
    from candidates
    where bench_rnd(trip_key, 'take', 0) < case when is_weekend then p_weekend else p_weekday end
),

timed as (
    select
        *,
        bench_rnd(trip_key, 'abnormal', 0) < 0.02 as is_too_short,
        timezone($time_zone::varchar, $day::date::timestamp
            + to_seconds(from_sec + floor(bench_rnd(trip_key, 'start', 0) * window_sec)::integer)) as started_at
    from chosen
),

sized as (
    select
        *,
        case when is_too_short then 15 + floor(bench_rnd(trip_key, 'short', 0) * 40)::integer
             else min_dur + floor(pow(bench_rnd(trip_key, 'duration', 0), 1.4) * (max_dur - min_dur))::integer
        end as duration_s,
        -- average speed 25-65 km/h, faster on longer trips (more highway)
        (25 + 25 * bench_rnd(trip_key, 'speed', 0) + 15 * style) / 3.6 as speed_ms
    from timed
),

measured as (
    select
        *,
        started_at + to_seconds(duration_s) as ended_at,
        case when is_too_short then 40 + floor(40 * bench_rnd(trip_key, 'short_m', 0))::bigint
             else round(duration_s * speed_ms)::bigint end as mileage_m,
        speed_ms * 3.6 * (1.3 + 0.5 * bench_rnd(trip_key, 'max', 0)) as max_speed_kmh,
        -- events come with driving: about one per 210 s on average, more for rougher drivers
        case when is_too_short then 0
             else floor(2 * bench_rnd(trip_key, 'events', 0) * duration_s / (140 + 140 * (1 - style)))::integer
        end as count_events
    from sized
),

with_events as (
    select
        *,
        list_transform(range(count_events), i -> bench_event_type(bench_rnd(trip_key, 'event_type', i))) as event_types
    from measured
),

factored as (
    select
        *,
        list_sum(list_transform(event_types, t -> trip_event_weight(t))) as risk,
        len(list_filter(event_types, t -> t in ('brake', 'throttle'))) as harsh_events,
        least(duration_s, 60 * len(list_filter(event_types, t -> t in ('phone_usage', 'phone_call')))
            + duration_s * 0.02 * bench_rnd(trip_key, 'distracted', 0)) as distracted_seconds,
        duration_s * (0.97 + 0.03 * bench_rnd(trip_key, 'driving', 0)) as driving_seconds,
        -- evening rush and weekday seconds of the trip day and the next (a night trip may cross
        -- midnight), with local bounds made instants through the zone, as the load derives them
        overlap_seconds(started_at, ended_at,
                timezone($time_zone::varchar, $day::date + interval 17 hour),
                timezone($time_zone::varchar, $day::date + interval 20 hour))
            + overlap_seconds(started_at, ended_at,
                timezone($time_zone::varchar, $day::date + interval 41 hour),
                timezone($time_zone::varchar, $day::date + interval 44 hour)) as evening_rush_seconds,
        case when isodow($day::date) <= 5 then overlap_seconds(started_at, ended_at,
                timezone($time_zone::varchar, $day::date::timestamp),
                timezone($time_zone::varchar, $day::date + interval 1 day)) else 0 end
            + case when isodow($day::date + 1) <= 5 then overlap_seconds(started_at, ended_at,
                timezone($time_zone::varchar, $day::date + interval 1 day),
                timezone($time_zone::varchar, $day::date + interval 2 day)) else 0 end as weekday_seconds
    from with_events
)

select
    user_id,
    org_user_id,
    device_id,
    os,
    coordinate,
    trip_key,
    event_types,
    's-' || user_id || '-' || strftime($day::date, '%Y%m%d') || '-' || slot_no as trip_id,
    bench_rnd(trip_key, 'auto_start', 0) < 0.80 as is_auto_start,
    bench_rnd(trip_key, 'auto_end', 0) < 0.85 as is_auto_end,
    started_at,
    ended_at,
    $day::date as trip_date,
    case slot when 'pm' then work_lat else home_lat end as start_lat,
    case slot when 'pm' then work_lng else home_lng end as start_lng,
    case slot when 'am' then work_lat when 'pm' then home_lat
         else home_lat + 0.05 * (bench_rnd(trip_key, 'dest_lat', 0) - 0.5) end as end_lat,
    case slot when 'am' then work_lng when 'pm' then home_lng
         else home_lng + 0.08 * (bench_rnd(trip_key, 'dest_lng', 0) - 0.5) end as end_lng,
    case when bench_rnd(trip_key, 'start_poi', 0) < 0.85 then case slot when 'pm' then 'Work' else 'Home' end end as start_poi,
    case when bench_rnd(trip_key, 'end_poi', 0) < 0.85 then
        case slot when 'am' then 'Work' when 'pm' then 'Home'
            else ['Supermarket', 'City Park', 'Fitness Studio', 'Cinema', 'Restaurant', 'Bakery'][
                1 + floor(bench_rnd(trip_key, 'poi_name', 0) * 6)::integer]
        end end as end_poi,
    case when is_too_short then 'abnormal' else 'normal' end as status,
    case when is_too_short then 'too_short' else '' end as abnormal_reason,
    not is_too_short as is_normal,
    mileage_m,
    duration_s::bigint as duration_s,
    duration_s::double as elapsed_seconds,
    mileage_m / duration_s * 3.6 as avg_speed_kmh,
    max_speed_kmh,
    count_events,
    -- raw points are not synthesized; the trip says how many it would have had (1 Hz)
    duration_s as count_points,
    trip_score(risk, mileage_m) as score,
    energy_grams(mileage_m, harsh_events) as energy_g,
    driving_seconds,
    driving_seconds * (0.05 + 0.25 * bench_rnd(trip_key, 'low_speed', 0)) as low_speed_seconds,
    driving_seconds * (0.05 + 0.2 * style * bench_rnd(trip_key, 'acc', 0)) as acc_over_1_seconds,
    distracted_seconds,
    evening_rush_seconds,
    weekday_seconds
from factored
