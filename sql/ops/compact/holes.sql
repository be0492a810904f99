-- grain: one row per member a committed purge moved out of a merged file of the day whose bytes
-- there are still to be overwritten
-- reads: archive_holes
-- params: $day DATE
select name, member_offset, member_length from archive_holes where day = $day::date order by name, member_offset
