-- Removes quarantined raw lines of purged users that no trip id ties to them: records rejected
-- for their own reasons (time_out_of_range, trip_id_taken, invalid_os ...) and late records of a
-- deleted account (user_deleted). A line belongs to a user when its app is the user's and its
-- platformUserId is the user's id, or it has no valid platformUserId and its orgUserId is the
-- user's. A line that is not JSON, or names no app, cannot be attributed to anyone and stays.
-- Run after every load, against every purged user, so late records do not stay either.
-- reads: purged_users
-- params: none

create or replace temp table quarantine_owners as
select
    rowid as row_id,
    app_id,
    try_cast(json_extract_string(raw, '$.platformUserId') as bigint) as platform_user_id,
    json_extract_string(raw, '$.orgUserId') as org_user_id
from (
    select rowid, app_id, case when json_valid(raw) then raw end as raw
    from quarantine
    where kind = 'record' and app_id is not null and raw is not null
)
where raw is not null;

delete from quarantine
where rowid in (
    select q.row_id
    from quarantine_owners as q
    semi join purged_users as u
        on u.app_id = q.app_id
        and (
            q.platform_user_id = u.user_id
            or (coalesce(q.platform_user_id, 0) < 1 and q.org_user_id = u.org_user_id)
        )
);
