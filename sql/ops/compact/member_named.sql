-- grain: at most one row: the member of a merged archive file of day $day that holds the archived
-- file named $name (quarantine.js show says where a quarantined line's file is now)
-- reads: archive_members
-- params: $day DATE, $name VARCHAR
select merged_name, member_offset, member_length
from archive_members
where day = $day::date and name = $name
order by merged_name desc
limit 1
