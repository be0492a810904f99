-- grain: one row per leg of a generated trip (a straight stretch of leg_len seconds)
-- params: none (reads gen_trips)
-- A leg may start with a stop (traffic light) or a turn; highway legs have neither. Speeds are in
-- metres per second, headings in degrees clockwise from north.
create or replace temp table gen_legs as
with legs as (
    select *, unnest(range(n_legs)) as k
    from gen_trips
),

kinds as (
    select
        *,
        k * leg_len as leg_start,
        least(leg_len, n_points - k * leg_len) as leg_points,
        is_highway
            and k >= floor(n_legs * (0.2 + 0.15 * gen_rnd(trip_key, 'hw_from', 0)))
            and k < ceil(n_legs * (0.65 + 0.2 * gen_rnd(trip_key, 'hw_to', 0))) as on_highway,
        gen_rnd(trip_key, 'speeding', k) < 0.01 + 0.08 * style as is_speeding,
        gen_rnd(trip_key, 'vmax', k) as u_vmax,
        gen_rnd(trip_key, 'stop', k) as u_stop,
        gen_rnd(trip_key, 'turn', k) as u_turn,
        case when gen_rnd(trip_key, 'turn_side', k) < 0.5 then -1 else 1 end as turn_side
    from legs
),

shaped as (
    select
        *,
        case
            when on_highway and is_speeding then 37.5 + 4.2 * u_vmax   -- 135-150 km/h
            when on_highway then 22.2 + 12.5 * u_vmax                  -- 80-125 km/h
            when is_speeding then 16.7 + 4.2 * u_vmax                  -- 60-75 km/h
            else 7.0 + 8.3 * u_vmax                                    -- 25-55 km/h
        end as vmax,
        case when not on_highway and k > 0 and u_stop < 0.45
             then least(5 + floor(25 * gen_rnd(trip_key, 'stop_len', k))::integer, leg_len // 3)
             else 0 end as stop_s,
        case
            when k = 0 then 0.0
            when on_highway and u_turn < 0.2 then turn_side * (5 + 15 * gen_rnd(trip_key, 'turn_deg', k))
            when on_highway then 0.0
            when u_turn < 0.35 then turn_side * (80 + 20 * gen_rnd(trip_key, 'turn_deg', k))
            when u_turn < 0.5 then turn_side * (15 + 30 * gen_rnd(trip_key, 'turn_deg', k))
            else 0.0
        end as turn,
        4 + 3 * gen_rnd(trip_key, 'turn_speed', k) as turn_speed
    from kinds
),

linked as (
    select
        *,
        abs(turn) >= 60 as is_big_turn,
        heading0 + sum(turn) over w - turn as heading_before,
        lag(vmax) over w as prev_vmax,
        lead(stop_s) over w as next_stop_s,
        lead(abs(turn) >= 60) over w as next_is_big_turn,
        lead(turn_speed) over w as next_turn_speed
    from shaped
    window w as (partition by trip_no order by k)
)

select
    *,
    case
        when k = 0 or stop_s > 0 then 0.0
        when is_big_turn then least(turn_speed, prev_vmax)
        else prev_vmax
    end as entry_speed,
    case
        when k = n_legs - 1 or next_stop_s > 0 then 0.0
        when next_is_big_turn then next_turn_speed
        else 1000.0
    end as exit_cap
from linked
