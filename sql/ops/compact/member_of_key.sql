-- grain: at most one row: the member of a merged archive file that holds the loaded file whose
-- bytes have SHA-256 $file_key (the newest day's, were there two)
-- reads: archive_members
-- params: $file_key VARCHAR
select day::varchar as day, name, merged_name, member_offset, member_length, lines, bytes, indexed_key
from archive_members
where file_key = $file_key
order by day desc
limit 1
