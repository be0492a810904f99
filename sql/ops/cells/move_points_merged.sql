-- As move_points_unmerged.sql, with merged points files among $files (src/compact/points.ts): their
-- rows of this loaded file only
-- writes: move_points
-- params: $files VARCHAR[], $app_id, $trip_ids VARCHAR[], $trip_date DATE, $file_key
insert into move_points
select app_id, trip_id, t, lat, lng, speed, $trip_date::date, $file_key
from read_parquet($files, union_by_name = true, hive_partitioning = false)
where app_id = $app_id and list_contains($trip_ids, trip_id) and (source_key is null or source_key = $file_key)
