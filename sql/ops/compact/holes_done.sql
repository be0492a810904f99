-- The moved members' bytes of the day are overwritten: their rows go.
-- params: $day DATE
delete from archive_holes where day = $day::date
