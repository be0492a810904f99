-- One file of a moved driver's package read into a temp table (src/cells/move-import.ts renames it
-- after its table)
-- params: $file VARCHAR
create or replace temp table move_in_file as select * from read_parquet($file)
