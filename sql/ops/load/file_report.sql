-- One row per counted thing of the staged file: (section, reason, n). Feeds the load report.
select 'records' as section, coalesce(reason, case when superseded_in_file then 'superseded_in_file' when is_unchanged then 'unchanged' else 'loaded' end) as reason, count(*) as n
from int_trip_records group by all
union all
select 'points', coalesce(drop_reason, 'kept'), count(*) from int_points group by all
union all
select 'events', coalesce(reason, 'loaded'), count(*) from int_events group by all
union all
select 'status', case when is_normal then 'normal' else abnormal_reason end, count(*) from int_trips group by all
union all
-- a trip is counted once (replaced_trips may hold its copy at staging and a later run file's copy)
select 'replaced', 'replaced', count(*) from (select distinct app_id, trip_id from replaced_trips)
