-- The lines of records refused at staging, whose text the quarantine keeps.
-- grain: one row per such line, by line_no
-- reads: int_trip_records (staged)
select line_no from int_trip_records where reason is not null order by line_no
