-- A re-derive replaced the raw points of loaded file $file_key (src/load/rederive-file.ts): its rows
-- in every merged file are no longer read (they stay until the next merge of the date drops them,
-- and the purge still opens those files for its drivers).
-- writes: points_merged
-- params: $file_key VARCHAR
update points_merged set live = false where source_key = $file_key and live
