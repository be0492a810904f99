-- The ledger row of a file whose bytes were loaded already (none: not loaded).
-- grain: at most one row
-- reads: loaded_files
-- params: $key VARCHAR (the file's content key)
select batch_id from loaded_files where file_key = $key
