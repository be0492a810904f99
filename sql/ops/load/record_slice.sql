-- Records what a slice of a large partner file is (src/load/slices.ts), in the slice's merge
-- transaction: one row per slice, by its ledger key. Writes: loaded_slices.
-- params: $file_key VARCHAR, $source_key VARCHAR, $source_path VARCHAR, $start_byte BIGINT,
--         $end_byte BIGINT, $first_line BIGINT
insert or ignore into loaded_slices
values ($file_key, $source_key, $source_path, $start_byte, $end_byte, $first_line)
