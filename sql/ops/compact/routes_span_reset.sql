-- A route file about to be written anew (src/warehouse/route-files.ts: none under its name, a damaged
-- merged file removed) stands for its own version only: its span goes before it is written.
-- writes: route_file_spans
-- params: $trip_date DATE, $version BIGINT
delete from route_file_spans where trip_date = $trip_date::date and version = $version
