-- The trips written since $since, and their events (with changed trips: a trip's events carry
-- its version, sql/ops/load/merge_file.sql).
-- params: $since BIGINT

insert into slot.trips by name
select
    app_id, trip_id, user_id, org_user_id, device_id, os, coordinate, is_auto_start, is_auto_end,
    started_at, ended_at, trip_date, start_lat, start_lng, end_lat, end_lng, start_poi, end_poi,
    status, abnormal_reason, is_normal, mileage_m, duration_s, avg_speed_kmh, max_speed_kmh,
    count_events, score, energy_g, model_version, version
from trips
where version > $since;

insert into slot.trip_events by name select * from trip_events where version > $since;
