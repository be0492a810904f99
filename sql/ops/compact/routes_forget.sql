-- The source files of a merge, removed from disk: the purge's index and the spans forget them.
-- writes: route_file_drivers, route_file_spans
-- params: $trip_date DATE, $versions BIGINT[] (the removed files' versions)
delete from route_file_drivers
where trip_date = $trip_date::date and version in (select unnest($versions)::bigint);

delete from route_file_spans
where trip_date = $trip_date::date and version in (select unnest($versions)::bigint);
