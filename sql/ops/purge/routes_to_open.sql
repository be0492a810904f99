-- grain: one row per route file (published/routes/trip_date=<day>/v<version>.route) a purge must
-- open: one whose drivers (route_file_drivers) include a purged driver, or one the index does not
-- know (written before it existed): a file it does not know may hold anyone
-- reads: route_file_drivers, purge_requests
-- params: $paths VARCHAR[], $days VARCHAR[], $versions BIGINT[] (parallel lists; version null: not a route file's name)
with listing as (
    select unnest($paths) as path, unnest($days)::date as day, unnest($versions) as version
),
indexed as (
    select distinct r.trip_date, r.version
    from route_file_drivers as r
    semi join listing as l on l.day = r.trip_date and l.version = r.version
),
holding as (
    select distinct r.trip_date, r.version
    from route_file_drivers as r
    semi join purge_requests as p on p.app_id = r.app_id and p.user_id = r.user_id
)
select l.path
from listing as l
where not exists (select 1 from indexed as i where i.trip_date = l.day and i.version = l.version)
    or exists (select 1 from holding as h where h.trip_date = l.day and h.version = l.version)
order by l.path
