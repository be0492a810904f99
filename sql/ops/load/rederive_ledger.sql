-- A re-derived file's ledger row names the batch that re-derived it.
-- writes: loaded_files
-- params: $batch_id BIGINT, $key VARCHAR (the file's content key)
update loaded_files set batch_id = $batch_id where file_key = $key
