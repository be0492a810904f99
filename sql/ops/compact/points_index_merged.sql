-- A merged raw-points file of a trip date, entered before it is renamed into place
-- (src/compact/points.ts): the loaded files whose rows it holds (live: readers take them from it
-- from the rename on; the purge opens it for those files' drivers), and the sources it replaces,
-- listed for removal once it is in place.
-- writes: points_merged, points_merge_garbage
-- params: $trip_date DATE, $name VARCHAR (the merged file's), $keys VARCHAR[] (the loaded files
--         whose rows it holds), $sources VARCHAR[] (the names of the files it replaces)
delete from points_merged where trip_date = $trip_date::date and name = $name;

insert into points_merged
select distinct $trip_date::date, $name, k, true
from (select unnest($keys) as k);

insert into points_merge_garbage
select $trip_date::date, $name, s
from (select unnest($sources) as s);
