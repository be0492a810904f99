-- The lines of records refused as 'trip_immutable' (resends.sql), whose text the quarantine keeps.
-- grain: one row per such line, by line_no
-- reads: int_trip_records (staged)
select line_no from int_trip_records where reason = 'trip_immutable' order by line_no
