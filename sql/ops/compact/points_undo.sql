-- A merged raw-points file $name of a date that never reached its place (its merge killed between
-- its transaction and the rename): its rows and garbage rows go; its sources stay as they are.
-- writes: points_merged, points_merge_garbage
-- params: $trip_date DATE, $name VARCHAR
delete from points_merged where trip_date = $trip_date::date and name = $name;

delete from points_merge_garbage where trip_date = $trip_date::date and name = $name;
