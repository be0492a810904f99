-- grain: one row per member of the merged archive file $merged of day $day that may hold a driver
-- in purge_requests: its file's rows in the purge's index name one (as archives_holding.sql reads
-- them: wider than the purge's rule; a member is known by the key its file was indexed under),
-- or the index does not know it, which may hold anyone
-- reads: archive_members, file_drivers, indexed_files, purge_requests
-- params: $day DATE, $merged VARCHAR
with holding_keys as (
    select distinct f.file_key
    from file_drivers as f
    semi join purge_requests as p
        on f.app_id is null
        or (f.app_id = p.app_id and (f.user_id is null or f.user_id = p.user_id or f.org_user_id = p.org_user_id))
)
select m.member_offset
from archive_members as m
where m.day = $day::date
    and m.merged_name = $merged
    and (
        coalesce(m.indexed_key, m.file_key) in (select file_key from holding_keys)
        or coalesce(m.indexed_key, m.file_key) not in (select file_key from indexed_files)
    )
