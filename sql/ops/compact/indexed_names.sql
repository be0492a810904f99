-- grain: one row per name of the day folder `landing/loaded/$day/` that the purge's index
-- (indexed_files) knows: only those are merged, so a merged file never hides a record from a purge
-- reads: indexed_files
-- params: $day DATE
select distinct archive_name as name
from indexed_files
where archive_day = $day::date and archive_name is not null
