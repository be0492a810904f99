-- What the events of a publish of $version start from, one row: the versions each kind announced
-- up to (scores and user.deleted: recorded in meta; trips: the newest announcement), and whether
-- trips were written (trip.created, trip.updated), scores published (safety_score.updated) or
-- users purged (user.deleted) since. A kind with none is skipped, its statements and all: the
-- continuous load publishes every few seconds and a score run once a night.
-- params: $version BIGINT
with since as (
    select
        (select coalesce(max(value::bigint), 0) from meta where key = 'score_events_version') as scores_since,
        (select coalesce(max(announced_version), 0) from announced_trips) as trips_since,
        (select coalesce(max(value::bigint), 0) from meta where key = 'user_events_version') as users_since
)

select
    scores_since,
    trips_since,
    users_since,
    exists (select 1 from trips where version > since.trips_since and version <= $version) as trips,
    exists (select 1 from score_runs where version > since.scores_since and version <= $version) as scores,
    exists (select 1 from purged_users where version > since.users_since and version <= $version) as users
from since
