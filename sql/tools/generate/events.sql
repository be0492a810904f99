-- grain: one row per generated event
-- params: $time_zone VARCHAR
-- Driving events sit where the speed profile puts them (braking before a stop, accelerating away,
-- turning, fast legs); phone, night and tired events are intervals of the trip. Positions and
-- times come from the trip's points at the event's first and last second.
create or replace temp table gen_events as
with legs as (
    select * from gen_legs where n_points >= 10
),

trips as (
    select * from gen_trips where n_points >= 10
),

phone_calls as (
    select
        trip_no,
        floor(gen_rnd(trip_key, 'call_at', 0) * n_points * 0.8)::integer as i_start,
        20 + floor(280 * gen_rnd(trip_key, 'call_len', 0))::integer as len
    from trips
    where gen_rnd(trip_key, 'call', 0) < 0.12 + 0.10 * style
),

intervals (trip_no, type, i_start, i_end, detail) as (
    select trip_no, 'brake', leg_start + leg_points - 4, leg_start + leg_points - 1, 0
    from legs
    where k < n_legs - 1 and exit_cap < 100 and gen_rnd(trip_key, 'brake', k) < 0.03 + 0.15 * style
    union all
    select trip_no, 'throttle', leg_start + stop_s, leg_start + stop_s + 3, 0
    from legs
    where (k = 0 or stop_s > 0) and gen_rnd(trip_key, 'throttle', k) < 0.03 + 0.15 * style
    union all
    select trip_no, case when turn < 0 then 'corner_left' else 'corner_right' end,
        leg_start + stop_s, leg_start + stop_s + 4, 0
    from legs
    where is_big_turn and gen_rnd(trip_key, 'corner', k) < 0.05 + 0.25 * style
    union all
    select trip_no, 'speeding', leg_start + leg_points // 4, leg_start + (3 * leg_points) // 4,
        case when on_highway then 120 else 50 end
    from legs
    where is_speeding and leg_points >= 20
    union all
    select trip_no, 'phone_call', i_start, i_start + len, len
    from phone_calls
    union all
    select t.trip_no, 'phone_usage', u.i_start, u.i_start + u.len, u.len
    from trips as t
    left join phone_calls as c using (trip_no),
    lateral (select
        case when c.i_start is not null and gen_rnd(t.trip_key, 'usage_near_call', 0) < 0.5
             then c.i_start + floor(gen_rnd(t.trip_key, 'usage_at', 0) * c.len * 0.8)::integer
             else floor(gen_rnd(t.trip_key, 'usage_at', 0) * t.n_points * 0.85)::integer end as i_start,
        10 + floor(110 * gen_rnd(t.trip_key, 'usage_len', 0))::integer as len) as u
    where gen_rnd(t.trip_key, 'usage', 0) < 0.15 + 0.15 * t.style
    union all
    select trip_no, 'night_driving', 0, n_points - 1, 0
    from trips
    where is_night
    union all
    select trip_no, 'tired_driving', floor(n_points * (0.5 + 0.3 * gen_rnd(trip_key, 'tired_at', 0)))::integer,
        floor(n_points * (0.5 + 0.3 * gen_rnd(trip_key, 'tired_at', 0)))::integer
            + 60 + floor(180 * gen_rnd(trip_key, 'tired_len', 0))::integer,
        0
    from trips
    where (dur_s >= 35 * 60 and gen_rnd(trip_key, 'tired', 0) < 0.35)
       or (is_night and dur_s >= 10 * 60 and gen_rnd(trip_key, 'tired', 0) < 0.30)
),

clamped as (
    select
        i.trip_no,
        i.type,
        least(i.i_start, t.n_points - 1) as i_start,
        least(i.i_end, t.n_points - 1) as i_end,
        i.detail
    from intervals as i
    join trips as t using (trip_no)
)

select
    c.trip_no,
    c.i_start,
    c.type,
    gen_iso(a.t, $time_zone) as start_time,
    gen_iso(b.t, $time_zone) as end_time,
    {'lat': a.lat, 'lng': a.lng} as start_point,
    {'lat': b.lat, 'lng': b.lng} as end_point,
    case c.type
        when 'brake' then format('Hard braking at {} km/h', round(a.speed * 3.6)::integer)
        when 'throttle' then format('Rapid acceleration to {} km/h', round(b.speed * 3.6)::integer)
        when 'corner_left' then 'Sharp left turn'
        when 'corner_right' then 'Sharp right turn'
        when 'speeding' then format('{} km/h in a {} km/h zone',
            round(greatest(a.speed, b.speed) * 3.6)::integer, c.detail)
        when 'phone_call' then format('Phone call of {} s', c.i_end - c.i_start)
        when 'phone_usage' then format('Phone handled for {} s', c.i_end - c.i_start)
        when 'night_driving' then 'Driving at night'
        when 'tired_driving' then format('Signs of fatigue after {} min at the wheel', c.i_start // 60)
    end as description
from clamped as c
join gen_points as a on a.trip_no = c.trip_no and a.i = c.i_start
join gen_points as b on b.trip_no = c.trip_no and b.i = c.i_end
