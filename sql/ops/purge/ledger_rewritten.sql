-- An archive rewritten without purged users' records is known to the ledger under its new SHA-256,
-- with the batch of the file it was, so loading it again is a no-op like loading the original.
-- params: $old_key VARCHAR, $new_key VARCHAR, $path VARCHAR, $bytes BIGINT, $now TIMESTAMPTZ
insert or ignore into loaded_files
select $new_key, $path, $bytes, batch_id, $now::timestamptz
from loaded_files
where file_key = $old_key
