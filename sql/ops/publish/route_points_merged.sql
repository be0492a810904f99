-- grain: as route_points.sql, with merged raw-points files among $files (src/compact/points.ts):
--        a merged file's rows are read for the live rows of the version's loaded files only
-- reads: trips, points_merged, the raw-point Parquet files of the files those trips came from
-- params: $files VARCHAR[] (the unmerged files of those file keys in the date's folder and the
--         merged ones holding them; at least one merged), $keys VARCHAR[] (the version's file keys
--         of that date), $version BIGINT, $trip_date DATE
with version_trips as (
    select app_id, trip_id, (row_number() over (order by app_id, trip_id))::integer as k
    from trips
    where version = $version and trip_date = $trip_date::date
),

live as (
    select name, source_key
    from points_merged
    where trip_date = $trip_date::date and live and source_key in (select unnest($keys))
)

select v.k, p.t_ms, p.lat, p.lng, p.speed
from version_trips as v
left join (
    select r.app_id, r.trip_id, r.t, epoch_ms(r.t)::double as t_ms, r.lat, r.lng, r.speed
    from (
        -- a constant list: the scan skips the merged files' row groups of other loaded files
        select *
        from read_parquet($files, union_by_name = true, filename = true, hive_partitioning = false)
        where source_key is null or list_contains($keys, source_key)
    ) as r
    where r.source_key is null
        or exists (select 1 from live as l where l.name = parse_filename(r.filename) and l.source_key = r.source_key)
) as p on p.app_id = v.app_id and p.trip_id = v.trip_id
order by v.k, p.t_ms, p.t
