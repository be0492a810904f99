-- The index forgets files past retention: the load prunes archive days, raw-points and route
-- trip dates before $oldest (src/load/retention.ts), and a row names a file only while one of
-- them is kept. A row of a file not archived from landing and of no trip date names nothing.
-- params: $oldest DATE (the oldest day kept)
delete from file_drivers
where (archive_day is null or archive_day < $oldest::date) and (trip_date is null or trip_date < $oldest::date);

delete from route_file_drivers where trip_date < $oldest::date;
