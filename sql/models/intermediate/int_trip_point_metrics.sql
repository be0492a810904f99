-- grain: one row per loadable trip (by its record's line_no) that has at least one kept point
-- reads: int_point_intervals
select
    line_no,
    count(*) as count_points,
    coalesce(sum(distance_m), 0) as distance_m,
    max(speed) * 3.6 as max_speed_kmh,
    bool_or(is_implausible) as has_implausible_interval,
    coalesce(sum(dt) filter (where is_driving), 0) as driving_seconds,
    -- docs/decisions.md, Trip records (load) rule speed_inconsistent: the distance the positions cover over the driving
    -- intervals, and the one the reported speeds (the earlier point's) describe
    coalesce(sum(distance_m) filter (where is_driving), 0) as driving_distance_m,
    coalesce(sum(speed * dt) filter (where is_driving), 0) as reported_distance_m,
    coalesce(sum(dt) filter (where is_driving and speed * 3.6 <= 20), 0) as low_speed_seconds,
    coalesce(sum(dt) filter (where is_driving and abs(next_speed - speed) / dt > 1), 0) as acc_over_1_seconds,
    arg_min(lat, t) as start_lat,
    arg_min(lng, t) as start_lng,
    arg_max(lat, t) as end_lat,
    arg_max(lng, t) as end_lng
from int_point_intervals
group by line_no
