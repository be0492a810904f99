-- The ledger row of a file merged: its content key, the path it was read from, its size, its batch.
-- writes: loaded_files
-- params: $key VARCHAR, $path VARCHAR, $bytes BIGINT, $batch_id BIGINT, $loaded_at TIMESTAMPTZ
insert into loaded_files values ($key, $path, $bytes, $batch_id, $loaded_at)
