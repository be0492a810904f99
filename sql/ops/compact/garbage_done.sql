-- The replaced files of the day are removed: their rows go.
-- params: $day DATE
delete from archive_garbage where day = $day::date
