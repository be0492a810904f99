-- grain: one row per loaded file the index knows, by the first 16 hex digits of its key, which name
-- its raw-points files (`warehouse/points/trip_date=<day>/f<16>_*`): a points file whose name is
-- not among them may hold anyone, so a purge opens it (src/purge/index.ts)
-- reads: indexed_files
select distinct left(file_key, 16) as prefix
from indexed_files
