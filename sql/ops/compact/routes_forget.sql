-- The source files of a merge, removed from disk: the purge's index and the spans forget them, and
-- the publish's record of checked files (route_files_checked) drops them and takes the merged file
-- as it was written (fsynced, renamed into place: intact), so no upkeep reads its index again.
-- writes: route_file_drivers, route_file_spans, route_files_checked
-- params: $trip_date DATE, $versions BIGINT[] (the removed files' versions), $paths VARCHAR[]
--         (the sources' and the merged file's paths under published/), $path VARCHAR (the merged
--         file's), $identity VARCHAR (its identity now, src/serving/checksum.ts)
delete from route_file_drivers
where trip_date = $trip_date::date and version in (select unnest($versions)::bigint);

delete from route_file_spans
where trip_date = $trip_date::date and version in (select unnest($versions)::bigint);

delete from route_files_checked where path in (select unnest($paths));

insert into route_files_checked values ($path, $identity);
