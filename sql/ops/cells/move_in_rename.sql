-- The package file just read (move_in_table.sql) kept under its table's name. In: name (the quoted
-- temp table name, move_in_<table>).
alter table move_in_file rename to {{name}}
