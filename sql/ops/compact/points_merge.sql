-- grain: one row per raw point the merged file of a trip date holds: every row of the unmerged
-- sources (their loaded file's key from their names, side by side in $files and $keys) and the live
-- rows of the merged sources (a re-derive's superseded rows are dropped here), ordered by loaded
-- file, trip and time: a reader asks for a loaded file's points (the route writer, a re-derive) or
-- a driver's trips, and the row groups' min/max of source_key let it skip the rest
-- reads: points_merged, the date's points files
-- params: $files VARCHAR[] (every source), $keys VARCHAR[] (each one's loaded file key; '' for a
--         merged source, whose rows carry theirs), $trip_date DATE
with sources as (
    select unnest($files) as filename, nullif(unnest($keys), '') as file_key
)

select coalesce(p.source_key, s.file_key) as source_key, p.app_id, p.trip_id, p.t, p.lat, p.lng, p.speed
from read_parquet($files, union_by_name = true, filename = true, hive_partitioning = false) as p
join sources as s on s.filename = p.filename
where s.file_key is not null
    or exists (
        select 1 from points_merged as m
        where m.trip_date = $trip_date::date
            and m.name = parse_filename(p.filename)
            and m.source_key = p.source_key
            and m.live
    )
order by source_key, p.app_id, p.trip_id, p.t
