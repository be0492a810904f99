-- The raw points of a re-derived file's trips that are kept as stored, from the file's earlier
-- Parquet files of one trip_date folder; once each (a run killed after copying them may have left
-- a second copy). The point columns only, as every points file holds them (the folder's trip_date
-- is not a column of its files).
-- reads: rederive_kept_as_stored
-- params: $files VARCHAR[] (those Parquet files)
create or replace temp table rederive_kept_point_rows as
select distinct p.app_id, p.trip_id, p.t, p.lat, p.lng, p.speed
from read_parquet($files, union_by_name = true, hive_partitioning = false) as p
semi join rederive_kept_as_stored as k on k.app_id = p.app_id and k.trip_id = p.trip_id
