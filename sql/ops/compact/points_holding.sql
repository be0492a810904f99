-- grain: one row per merged raw-points file (trip date, name) a purge opens: one of the loaded
-- files whose rows it holds (live or superseded) is indexed for a driver in purge_requests on that
-- date (as sql/ops/purge/points_holding.sql reads the index), or is not indexed at all (may hold
-- anyone). A merged file with no row here is not known, and opened too (src/purge/index.ts).
-- reads: points_merged, file_drivers, indexed_files, purge_requests
select distinct m.trip_date::varchar as day, m.name
from points_merged as m
where exists (
        select 1
        from file_drivers as f
        semi join purge_requests as p
            on f.app_id is null
            or (f.app_id = p.app_id and (f.user_id is null or f.user_id = p.user_id or f.org_user_id = p.org_user_id))
        where f.file_key = m.source_key and f.trip_date = m.trip_date
    )
    or not exists (select 1 from indexed_files as i where i.file_key = m.source_key)
