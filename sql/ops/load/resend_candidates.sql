-- Whether a staged SDK upload sends any trip that is stored already or sent twice in the file: most
-- send new trips once, and then resends.sql has nothing to compare.
-- grain: one row
-- reads: int_trip_records (staged)
select exists (select 1 from int_trip_records where owner_id is not null or superseded_in_file) as any
