-- grain: one row per record of one input file that will be loaded (valid, and the last line of
--        its tripId in the file)
-- reads: int_trip_records
select * from int_trip_records where reason is null and not superseded_in_file
