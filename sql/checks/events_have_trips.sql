-- check: every event belongs to a trip of the same user, and its count matches the trip's.
-- changes: trips, trip_events
-- params: $since BIGINT
with changed as (
    select app_id, trip_id, user_id, count_events from trips where version > $since
),

counted as (
    select e.app_id, e.trip_id, any_value(e.user_id) as user_id, count(*) as n
    from trip_events as e
    where e.version > $since
    group by e.app_id, e.trip_id
)

select coalesce(c.app_id, t.app_id) as app_id, coalesce(c.trip_id, t.trip_id) as trip_id
from counted as c
full join changed as t on t.app_id = c.app_id and t.trip_id = c.trip_id
where t.trip_id is null or coalesce(c.n, 0) <> t.count_events or c.user_id <> t.user_id
