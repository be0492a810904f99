-- grain: one user.deleted event per account purged in (since, version]
-- reads: purged_users, apps
-- params: $since BIGINT, $version BIGINT
-- Written after the purge's publish, so the user's data is no longer in what the API serves.
-- deletedAt is when the integrator's DELETE was recorded (the purge's time if unknown): an instant,
-- ISO 8601 in UTC to the millisecond like the envelope's createdAt (a time named ...At is an instant;
-- one named ...Time, a trip's, is wall-clock in the app's zone as the API answers). The id derives
-- from app and user: a user is purged once (purged_users), and a re-run after a crash repeats the
-- same id. An app no longer known gets no event.
select
    'evt_' || md5('user.deleted|' || p.app_id || '|' || p.user_id) as id,
    'user.deleted' as type,
    p.app_id,
    json_object(
        'orgUserId', p.org_user_id, 'userId', p.user_id,
        'deletedAt', strftime(timezone('UTC', coalesce(p.requested_at, p.purged_at)), '%Y-%m-%dT%H:%M:%S.%gZ')
    ) as data
from purged_users as p
join apps as a on a.app_id = p.app_id
where p.version > $since and p.version <= $version
    -- a driver moved to another cell is not deleted
    and not coalesce(p.moved, false)
order by p.app_id, p.user_id
