-- reads: purge_requests, purged_trips (sql/ops/purge/purged_trips.sql)
-- Removes every row of the users in `purge_requests` (app_id, user_id, org_user_id, requested_at)
-- from the warehouse, and records them so the next publish removes them from the slots too. A
-- user already recorded (a repeated request, or a purge run again after a crash) is not recorded
-- twice, so a repeated request does not make the publish rewrite the serving pack again. `moved`:
-- the driver moved to another cell (src/cells/move-leave.ts), its account is not deleted.
-- params: $version BIGINT, $now TIMESTAMPTZ

delete from trips as t using purge_requests as p where t.app_id = p.app_id and t.user_id = p.user_id;
delete from trip_events as t using purge_requests as p where t.app_id = p.app_id and t.user_id = p.user_id;
delete from stats_daily as t using purge_requests as p where t.app_id = p.app_id and t.user_id = p.user_id;
delete from safety_scores as t using purge_requests as p where t.app_id = p.app_id and t.user_id = p.user_id;
delete from safety_scores_removed as t using purge_requests as p where t.app_id = p.app_id and t.user_id = p.user_id;
-- what the webhook events announced of them (ids and score fingerprints) goes too
delete from announced_scores as t using purge_requests as p where t.app_id = p.app_id and t.user_id = p.user_id;
delete from announced_trips as t using purged_trips as p where t.app_id = p.app_id and t.trip_id = p.trip_id;
delete from quarantine as q using purged_trips as p where q.app_id = p.app_id and q.trip_id = p.trip_id;

insert into purged_users
select p.app_id, p.user_id, p.org_user_id, p.requested_at, $now, $version, p.moved
from purge_requests as p
anti join purged_users as u on u.app_id = p.app_id and u.user_id = p.user_id;
