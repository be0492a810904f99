-- grain: one row per archived landing file (landing/loaded/<day>/) a purge must open: one the index
-- names for a purged driver, or one it does not know (archived before it existed, or moved on a
-- later day than its load said): a file it does not know may hold anyone
-- reads: file_drivers, purge_requests
-- params: $paths VARCHAR[], $days VARCHAR[], $names VARCHAR[]: parallel lists, an archived file
--         and its day folder once for each name it may have been loaded under (its own, and
--         without the `<ms>-` prefix moveLanded gives a name already taken)
with listing as (
    select unnest($paths) as path, unnest($days)::date as day, unnest($names) as name
),
indexed as (
    select distinct f.archive_day, f.archive_name
    from file_drivers as f
    semi join listing as l on l.day = f.archive_day and l.name = f.archive_name
),
holding as (
    select distinct f.archive_day, f.archive_name
    from file_drivers as f
    semi join purge_requests as p
        on f.app_id is null
        or (f.app_id = p.app_id and (f.user_id is null or f.user_id = p.user_id or f.org_user_id = p.org_user_id))
    where f.archive_day is not null
)
select l.path
from listing as l
left join indexed as i on i.archive_day = l.day and i.archive_name = l.name
left join holding as h on h.archive_day = l.day and h.archive_name = l.name
group by l.path
having bool_or(h.archive_day is not null) or not bool_or(i.archive_day is not null)
order by l.path
