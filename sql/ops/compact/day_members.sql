-- grain: one row per member of a merged archive file of the day, in file and offset order
-- reads: archive_members
-- params: $day DATE
select file_key, name, merged_name, member_offset, member_length, lines, bytes, indexed_key
from archive_members
where day = $day::date
order by merged_name, member_offset
