-- The raw points of a re-derived file's trips that are kept as stored, from the file's earlier
-- Parquet files of one trip_date folder; once each (a run killed after copying them may have left
-- a second copy).
-- reads: rederive_kept_as_stored
-- params: $files VARCHAR[] (those Parquet files)
create or replace temp table rederive_kept_point_rows as
select distinct p.*
from read_parquet($files) as p
semi join rederive_kept_as_stored as k on k.app_id = p.app_id and k.trip_id = p.trip_id
