-- grain: one row per raw-points file (warehouse/points/trip_date=<day>/) a purge must open: one
-- whose loaded file (its name's `f<first 16 of the file key>_`) the index names for a purged
-- driver on that day, or one the index does not know (written before it existed, or by another
-- writer than the load): a file it does not know may hold anyone
-- reads: file_drivers, purge_requests
-- params: $paths VARCHAR[], $days VARCHAR[], $prefixes VARCHAR[] (parallel lists; prefix null: a name not of the load's)
with listing as (
    select unnest($paths) as path, unnest($days)::date as day, unnest($prefixes) as prefix
),
indexed as (
    select distinct left(f.file_key, 16) as prefix
    from file_drivers as f
    where left(f.file_key, 16) in (select prefix from listing where prefix is not null)
),
holding as (
    select distinct left(f.file_key, 16) as prefix, f.trip_date
    from file_drivers as f
    semi join purge_requests as p
        on f.app_id is null
        or (f.app_id = p.app_id and (f.user_id is null or f.user_id = p.user_id or f.org_user_id = p.org_user_id))
    where f.trip_date is not null
)
select l.path
from listing as l
where not exists (select 1 from indexed as i where i.prefix = l.prefix)
    or exists (select 1 from holding as h where h.prefix = l.prefix and h.trip_date = l.day)
order by l.path
