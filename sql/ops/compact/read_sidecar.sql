-- A merged archive file's sidecar (`<merged>.members.idx`, NDJSON: a line per member, a line per
-- file the merge replaces, and a line per member a purge moved out of another merged file) as the
-- temp tables switch.sql reads.
-- grain: merge_members one row per member; merge_replaced one row per replaced name; merge_moved one
-- row per member moved out of a merged file (its name, offset and length there)
-- params: $file VARCHAR
create or replace temp table merge_sidecar as
select *
from read_json($file, format = 'newline_delimited', columns = {
    kind: 'VARCHAR', file_key: 'VARCHAR', was_key: 'VARCHAR', indexed_key: 'VARCHAR', name: 'VARCHAR',
    member_offset: 'BIGINT', member_length: 'BIGINT', lines: 'BIGINT', bytes: 'BIGINT'
});

create or replace temp table merge_members as
select file_key, was_key, name, member_offset, member_length, lines, bytes, indexed_key
from merge_sidecar
where kind = 'member';

create or replace temp table merge_moved as
select name, member_offset, member_length
from merge_sidecar
where kind = 'moved';

create or replace temp table merge_replaced as
select distinct name from merge_sidecar where kind = 'replaces'
