-- grain: one row per archived file of the day a committed merge replaced and that is still to remove
-- reads: archive_garbage
-- params: $day DATE
select distinct name from archive_garbage where day = $day::date
