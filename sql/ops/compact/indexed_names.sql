-- grain: one row per name of the day folder `landing/loaded/$day/` that the purge's index
-- (indexed_files) knows, with a key it knows it by: only those are merged, so a merged file never
-- hides a record from a purge
-- reads: indexed_files
-- params: $day DATE
select archive_name as name, min(file_key) as file_key
from indexed_files
where archive_day = $day::date and archive_name is not null
group by archive_name
