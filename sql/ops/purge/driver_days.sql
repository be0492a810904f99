-- grain: one row per trip date whose raw-points and route files may hold a purged driver's trips:
-- the dates of their warehouse trips and those the index (file_drivers) recorded for them, which
-- still know the dates after a purge stopped midway has deleted the trips
-- reads: purged_trips, file_drivers, purge_requests
select distinct trip_date
from (
    select trip_date::varchar as trip_date from purged_trips
    union all
    select f.trip_date::varchar
    from file_drivers as f
    semi join purge_requests as p
        on f.app_id is null
        or (f.app_id = p.app_id and (f.user_id is null or f.user_id = p.user_id or f.org_user_id = p.org_user_id))
    where f.trip_date is not null
)
order by trip_date
