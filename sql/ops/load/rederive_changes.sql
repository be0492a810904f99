-- One row: how many of the staged file's trips the re-derivation changes (status, reason, mileage,
-- points or top speed), and how many are new to the warehouse.
-- reads: int_trips (restricted by rederive_restrict.sql), trips
select
    count(*) filter (where t.trip_id is not null and (
        t.status <> n.status or t.abnormal_reason <> n.abnormal_reason or t.mileage_m <> n.mileage_m
        or t.count_points <> n.count_points or t.max_speed_kmh <> n.max_speed_kmh)) as changed,
    count(*) filter (where t.trip_id is null) as added
from int_trips as n
left join trips as t on t.app_id = n.app_id and t.trip_id = n.trip_id
