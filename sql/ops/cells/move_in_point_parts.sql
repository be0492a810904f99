-- The package's raw points by trip date and loaded file: one points file each (src/cells/move-import.ts).
-- grain: one row per trip_date and file_key
select distinct trip_date::varchar as trip_date, file_key from move_in_points order by 1, 2
