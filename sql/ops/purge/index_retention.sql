-- The index forgets files past retention: the load prunes archive days, raw-points and route trip
-- dates before $oldest (src/load/retention.ts). A driver's row goes when its trip date is past and
-- its file's archive is gone (or never was); a file's row when its archive is gone and no trip
-- date of it is kept (its points files are gone too).
-- params: $oldest DATE (the oldest day kept)
delete from file_drivers as f
where (f.trip_date is null or f.trip_date < $oldest::date)
    and not exists (
        select 1 from indexed_files as i where i.file_key = f.file_key and i.archive_day >= $oldest::date
    );

delete from indexed_files as i
where (i.archive_day is null or i.archive_day < $oldest::date)
    and not exists (select 1 from file_drivers as f where f.file_key = i.file_key and f.trip_date >= $oldest::date);

delete from route_file_drivers where trip_date < $oldest::date;

delete from route_file_spans where trip_date < $oldest::date;

-- the merged archive files' members and leftovers of days the load's pruning removed
delete from archive_members where day < $oldest::date;

delete from archive_garbage where day < $oldest::date;

delete from archive_holes where day < $oldest::date;
