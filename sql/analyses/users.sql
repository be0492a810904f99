-- grain: one row per app and user with trips in the export, busiest first: where an analyst finds
--        the app_id and user_id (the passport's platform id) to pass to the other files
-- reads: trips
-- params: none
select
    app_id,
    user_id,
    any_value(org_user_id) as org_user_id,
    count(*)::integer as trips,
    min(trip_date) as first_day,
    max(trip_date) as last_day
from trips
group by app_id, user_id
order by trips desc, app_id, user_id
