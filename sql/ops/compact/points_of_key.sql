-- grain: one row per merged raw-points file (trip date, name) holding live rows of loaded file $file_key
-- reads: points_merged
-- params: $file_key VARCHAR
select trip_date::varchar as trip_date, name
from points_merged
where source_key = $file_key and live
order by trip_date, name
