-- grain: one row per generated point (1 Hz), including those hidden by a GPS gap
-- Stored in trip_no order, so a range of trips reads only its own row groups.
-- params: none (reads gen_legs)
-- Speed follows a trapezoid per leg (stop, accelerate, cruise, slow for the next stop or turn);
-- the position integrates the true speed along the heading, so lat/lng move consistently.
create or replace temp table gen_points as
with raw as (
    select *, unnest(range(leg_points)) as s
    from gen_legs
),

moving as (
    select
        trip_no,
        trip_key,
        leg_start + s as i,
        start_lat,
        start_lng,
        points_base_ms,
        spike_i,
        spike_speed,
        gap_from,
        gap_len,
        case when s < stop_s then 0.0
             else least(
                 case when entry_speed <= vmax then least(vmax, entry_speed + accel * (s - stop_s))
                      else greatest(vmax, entry_speed - decel * (s - stop_s)) end,
                 exit_cap + decel * (leg_points - 1 - s))
        end as v,
        heading_before + turn * least(1.0, greatest(0.0, (s - stop_s) / 4.0)) as h
    from raw
),

placed as (
    select
        *,
        coalesce(sum(v * cos(radians(h))) over w, 0) as north_m,
        coalesce(sum(v * sin(radians(h))) over w, 0) as east_m
    from moving
    window w as (partition by trip_no order by i rows between unbounded preceding and 1 preceding)
)

select
    trip_no,
    i,
    points_base_ms + 1000 * i as t,
    round(start_lat + north_m / gen_m_per_deg(), 6) as lat,
    round(start_lng + east_m / (gen_m_per_deg() * cos(radians(start_lat))), 6) as lng,
    round(case when i = spike_i then spike_speed
               else v * (1 + 0.06 * (gen_rnd(trip_key, 'v', i) - 0.5)) end, 2) as speed,
    round(((h % 360) + 360) % 360, 1) as heading,
    round(3 + 12 * pow(gen_rnd(trip_key, 'accuracy', i), 2), 1) as accuracy,
    gap_from >= 0 and i >= gap_from and i < gap_from + gap_len as in_gap
from placed
order by trip_no, i
