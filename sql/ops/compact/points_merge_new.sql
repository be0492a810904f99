-- grain: one row per raw point the first merged file of a trip date holds: every row of its
-- sources, none of them a merged file (so none has a source_key column), each with its loaded
-- file's key from its name, ordered as points_merge.sql orders them
-- reads: the date's points files
-- params: $files VARCHAR[] (every source), $keys VARCHAR[] (each one's loaded file key, side by side)
with sources as (
    select unnest($files) as filename, unnest($keys) as file_key
)

select s.file_key as source_key, p.app_id, p.trip_id, p.t, p.lat, p.lng, p.speed
from read_parquet($files, union_by_name = true, filename = true, hive_partitioning = false) as p
join sources as s on s.filename = p.filename
order by source_key, p.app_id, p.trip_id, p.t
