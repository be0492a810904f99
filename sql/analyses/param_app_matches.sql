-- grain: one row: whether $app_id names an app of the export, and the apps it holds
-- reads: apps
-- params: $app_id VARCHAR
select
    count(*) filter (where app_id = $app_id)::integer as matches,
    string_agg(app_id, ', ' order by app_id) as known
from apps
