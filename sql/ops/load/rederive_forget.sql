-- The counts a file's previous derivation left (quarantined lines and events, dropped points), so
-- the re-derivation's replace them. Runs inside the re-derivation's transaction.
-- params: $previous_batch_id BIGINT (loaded_files.batch_id: the file's last load or re-derivation)
delete from quarantine where batch_id = $previous_batch_id;

delete from point_drops where batch_id = $previous_batch_id;
