-- The merged raw-points files of trip dates the load's retention removed are forgotten.
-- writes: points_merged, points_merge_garbage
-- params: $oldest DATE (the oldest trip date kept)
delete from points_merged where trip_date < $oldest::date;

delete from points_merge_garbage where trip_date < $oldest::date
