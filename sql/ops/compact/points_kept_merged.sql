-- The raw points of a re-derived file's trips kept as stored, from the merged files of one trip
-- date holding its live rows, added to those read from its unmerged files
-- (sql/ops/load/rederive_kept_points.sql); once each.
-- reads: rederive_kept_as_stored, rederive_kept_point_rows (when $add)
-- params: $files VARCHAR[] (those merged files), $file_key VARCHAR
create or replace temp table rederive_kept_merged_rows as
select distinct p.app_id, p.trip_id, p.t, p.lat, p.lng, p.speed
from read_parquet($files, hive_partitioning = false) as p
semi join rederive_kept_as_stored as k on k.app_id = p.app_id and k.trip_id = p.trip_id
where p.source_key = $file_key
