-- The switch of a merged archive file, in one transaction (src/load/archive-merge.ts): its
-- members (temp table merge_members, read from its sidecar by read_sidecar.sql) replace the rows of
-- the files it replaces (merge_replaced: archived names and merged files of the day) and of the
-- members a purge moved out of a merged file into it (merge_moved); the purge's index names it
-- where it named a replaced file, and for each member's indexed key; a member the purge rewrote
-- (`was_key`) is entered in the ledger under its new SHA-256 with its original's batch, like a
-- rewritten archive (sql/ops/purge/ledger_rewritten.sql); the replaced files are listed for
-- removal, the moved members' bytes for overwriting.
-- reads: merge_members, merge_replaced, merge_moved
-- params: $day DATE, $merged VARCHAR, $dir VARCHAR (the day folder), $now TIMESTAMPTZ
delete from archive_members as a
where a.day = $day::date
    and (
        a.merged_name in (select name from merge_replaced)
        or a.merged_name = $merged
        or exists (select 1 from merge_moved as m where m.name = a.merged_name and m.member_offset = a.member_offset)
    );

insert into archive_members
select file_key, $day::date, name, $merged, member_offset, member_length, lines, bytes, indexed_key
from merge_members;

update indexed_files set archive_name = $merged
where archive_day = $day::date and archive_name in (select name from merge_replaced);

insert into indexed_files
select distinct m.indexed_key, $day::date, $merged
from merge_members as m
where m.indexed_key is not null
    and not exists (
        select 1 from indexed_files as i
        where i.file_key = m.indexed_key and i.archive_day = $day::date and i.archive_name = $merged
    );

insert or ignore into loaded_files
select m.file_key, $dir || '/' || m.name, m.bytes, l.batch_id, $now::timestamptz
from merge_members as m
join loaded_files as l on l.file_key = m.was_key
where m.was_key is not null;

insert into archive_garbage
select $day::date, name from merge_replaced;

insert into archive_holes
select $day::date, name, member_offset, member_length from merge_moved
