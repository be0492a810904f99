-- grain: sets line_no on stg_trip_records read by stg_trip_records_ndjson (one row per record)
-- reads: stg_trip_records (rows in file order), line_index (ordinal, line_no: the file's
--        non-blank lines, from the scan that hashed the file)
-- A table keeps its insertion order in rowid, so the n-th record is the n-th non-blank line.
-- An UPDATE touches only the new column; copying the table through a join would copy every point.
alter table stg_trip_records add column line_no bigint;
update stg_trip_records as s set line_no = i.line_no from line_index as i where i.ordinal = s.rowid
