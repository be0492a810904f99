-- The sources of merged raw-points file $name of a date are removed from disk: the rows of those
-- that were merged files, and its garbage rows, go.
-- writes: points_merged, points_merge_garbage
-- params: $trip_date DATE, $name VARCHAR
delete from points_merged
where trip_date = $trip_date::date
    and name in (select source from points_merge_garbage where trip_date = $trip_date::date and name = $name);

delete from points_merge_garbage where trip_date = $trip_date::date and name = $name;
