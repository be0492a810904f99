-- The switch of a merged archive file, in one transaction (src/load/archive-merge.ts): its
-- members (temp table merge_members, read from its sidecar by read_sidecar.sql) replace the rows of the files it
-- replaces (temp table merge_replaced: archived names and merged files of the day); the purge's
-- index names the merged file where it named a replaced one; a member the purge rewrote
-- (`was_key`) is entered in the ledger under its new SHA-256 with its original's batch, like a
-- rewritten archive (sql/ops/purge/ledger_rewritten.sql); the replaced files are listed for removal.
-- reads: merge_members (file_key, was_key, name, member_offset, member_length, lines, bytes),
-- merge_replaced (name)
-- params: $day DATE, $merged VARCHAR, $dir VARCHAR (the day folder), $now TIMESTAMPTZ
delete from archive_members
where day = $day::date
    and (merged_name in (select name from merge_replaced) or merged_name = $merged);

insert into archive_members
select file_key, $day::date, name, $merged, member_offset, member_length, lines, bytes
from merge_members;

update indexed_files set archive_name = $merged
where archive_day = $day::date and archive_name in (select name from merge_replaced);

insert or ignore into loaded_files
select m.file_key, $dir || '/' || m.name, m.bytes, l.batch_id, $now::timestamptz
from merge_members as m
join loaded_files as l on l.file_key = m.was_key
where m.was_key is not null;

insert into archive_garbage
select $day::date, name from merge_replaced
