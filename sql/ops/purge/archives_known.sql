-- grain: one row per archive (landing/loaded/<day>/<name>) the index knows, of days from $oldest:
-- a file it does not know may hold anyone, so a purge opens it (src/purge/index.ts)
-- reads: indexed_files
-- params: $oldest DATE (the oldest day folder in the archive)
select distinct archive_day::varchar as day, archive_name as name
from indexed_files
where archive_day >= $oldest::date
