-- grain: one row per archive (landing/loaded/<day>/<name>) the index names for a driver in
-- purge_requests, by their platformUserId or orgUserId (wider than the purge's rule, which the
-- scrub applies), or for everyone (a record without a plain-integer platformUserId, a line that is
-- not JSON)
-- reads: file_drivers, indexed_files, purge_requests
select distinct i.archive_day::varchar as day, i.archive_name as name
from file_drivers as f
semi join purge_requests as p
    on f.app_id is null
    or (f.app_id = p.app_id and (f.user_id is null or f.user_id = p.user_id or f.org_user_id = p.org_user_id))
join indexed_files as i on i.file_key = f.file_key
where i.archive_day is not null
