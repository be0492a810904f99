-- grain: one row per generated trip (per user, local day and time slot)
-- params: $seed BIGINT, $end_date DATE, $days INTEGER, $time_zone VARCHAR, $bad_records BOOLEAN
-- Slots give weekday commutes, weekend leisure and night trips (about 1.5 per user per day); the
-- 'extra' slot holds the few trips that carry bad points and events (bad-records file only).
create or replace temp table gen_trips as
with slots (slot, slot_no, p_weekday, p_weekend, from_sec, window_sec, min_dur, max_dur, p_highway) as (
    values
        ('am',                1, 0.72, 0.00,  7 * 3600,  90 * 60,  8 * 60, 35 * 60, 0.35),
        ('errand',            2, 0.12, 0.00, 10 * 3600, 330 * 60,  5 * 60, 30 * 60, 0.10),
        ('pm',                3, 0.62, 0.00, 17 * 3600, 120 * 60, 10 * 60, 40 * 60, 0.35),
        ('leisure_morning',   4, 0.00, 0.60,  9 * 3600, 150 * 60, 10 * 60, 60 * 60, 0.40),
        ('leisure_afternoon', 5, 0.00, 0.50, 13 * 3600, 180 * 60,  5 * 60, 60 * 60, 0.40),
        ('leisure_evening',   6, 0.00, 0.30, 17 * 3600 + 1800, 150 * 60, 10 * 60, 50 * 60, 0.30),
        ('night_late',        7, 0.04, 0.08, 22 * 3600, 119 * 60,  6 * 60, 60 * 60, 0.30),
        ('night_early',       8, 0.03, 0.05,  5400,     150 * 60,  5 * 60, 40 * 60, 0.30),
        ('extra',             9, 0.00, 0.00, 21 * 3600,  30 * 60, 10 * 60, 20 * 60, 0.00)
),

days as (
    select $end_date::date - d::integer as trip_day, d = 0 as is_last_day
    from range($days::integer) as r(d)
),

candidates as (
    select
        u.*,
        d.trip_day,
        s.*,
        s.slot = 'extra' as is_bad_source,
        hash($seed::bigint, u.platform_user_id, d.trip_day, s.slot_no) as trip_key,
        isodow(d.trip_day) >= 6 as is_weekend,
        d.is_last_day
    from gen_users as u
    cross join days as d
    cross join slots as s
),

chosen as (
    select *
    from candidates
    where (not is_bad_source
            and gen_rnd(trip_key, 'take', 0) < case when is_weekend then p_weekend else p_weekday end)
       or (is_bad_source and $bad_records::boolean and is_last_day and user_idx < 3)
),

shaped as (
    select
        *,
        from_sec + floor(gen_rnd(trip_key, 'start', 0) * window_sec)::integer as start_sec,
        case
            when is_bad_source or gen_rnd(trip_key, 'abnormal', 0) >= 0.02 then null
            else ['too_short', 'speed_implausible', 'one_point', 'time_inverted'][
                1 + floor(gen_rnd(trip_key, 'abnormal_kind', 0) * 4)::integer]
        end as abnormal_kind,
        min_dur + floor(pow(gen_rnd(trip_key, 'duration', 0), 1.4) * (max_dur - min_dur))::integer as planned_s,
        (slot like 'night%') as is_night
    from chosen
),

timed as (
    select
        *,
        case when abnormal_kind = 'too_short' then 15 + floor(gen_rnd(trip_key, 'short', 0) * 40)::integer
             else planned_s end as dur_s,
        gen_epoch_ms(trip_day::timestamp + to_seconds(start_sec), $time_zone) as start_ms
    from shaped
),

final as (
    select
        *,
        case when abnormal_kind = 'time_inverted'
             then start_ms - 1000 * floor(gen_rnd(trip_key, 'inverted', 0) * 20)::bigint
             else start_ms + 1000 * dur_s::bigint end as end_ms,
        case abnormal_kind when 'one_point' then 1 when 'time_inverted' then 40 else dur_s end as n_points,
        35 + floor(gen_rnd(trip_key, 'leg_len', 0) * 50)::integer as leg_len,
        dur_s >= 12 * 60 and gen_rnd(trip_key, 'highway', 0) < p_highway as is_highway,
        case slot when 'am' then home_lat when 'pm' then work_lat else home_lat end as start_lat,
        case slot when 'am' then home_lng when 'pm' then work_lng else home_lng end as start_lng,
        case slot
            when 'am' then work_bearing + 60 * (gen_rnd(trip_key, 'heading', 0) - 0.5)
            when 'pm' then work_bearing + 180 + 60 * (gen_rnd(trip_key, 'heading', 0) - 0.5)
            else 360 * gen_rnd(trip_key, 'heading', 0)
        end as heading0,
        1.2 + 1.4 * (0.5 * style + 0.5 * gen_rnd(trip_key, 'accel', 0)) as accel,
        1.5 + 2.0 * (0.5 * style + 0.5 * gen_rnd(trip_key, 'decel', 0)) as decel,
        not is_bad_source and gen_rnd(trip_key, 'epoch', 0) < 0.10 as time_as_epoch,
        gen_rnd(trip_key, 'auto_start', 0) < 0.80 as is_auto_start,
        gen_rnd(trip_key, 'auto_end', 0) < 0.85 as is_auto_end,
        row_number() over (partition by user_idx, trip_day order by start_sec, slot_no) as day_trip_no
    from timed
)

select
    -- day-major, bad-source trips last: one day's trips are one range of trip_no
    row_number() over (order by is_bad_source, trip_day, start_sec, user_idx, slot_no) as trip_no,
    *,
    ceil(n_points / leg_len)::integer as n_legs,
    case when abnormal_kind = 'time_inverted' then end_ms - 30000
         else start_ms + floor(gen_rnd(trip_key, 'ms_offset', 0) * 1000)::bigint end as points_base_ms,
    case when abnormal_kind = 'speed_implausible' then n_points // 2 else -1 end as spike_i,
    72 + 20 * gen_rnd(trip_key, 'spike', 0) as spike_speed,
    case when abnormal_kind is null and not is_bad_source and n_points >= 300
              and gen_rnd(trip_key, 'gap', 0) < 0.04
         then floor(n_points * (0.3 + 0.4 * gen_rnd(trip_key, 'gap_from', 0)))::integer
         else -1 end as gap_from,
    12 + floor(28 * gen_rnd(trip_key, 'gap_len', 0))::integer as gap_len,
    't-' || platform_user_id || '-' || strftime(trip_day, '%Y%m%d') || '-' || day_trip_no as trip_id,
    case when gen_rnd(trip_key, 'start_poi', 0) < 0.85 then
        case slot when 'pm' then 'Work' else 'Home' end end as start_poi,
    case when gen_rnd(trip_key, 'end_poi', 0) < 0.85 then
        case slot when 'am' then 'Work' when 'pm' then 'Home'
            else ['Supermarket', 'City Park', 'Fitness Studio', 'Cinema', 'Restaurant', 'Shopping Centre',
                  'Train Station', 'Hospital', 'Bakery', 'Petrol Station', 'Lakeside', 'Friends'][
                1 + floor(gen_rnd(trip_key, 'poi_name', 0) * 12)::integer]
        end end as end_poi
from final
order by trip_no
