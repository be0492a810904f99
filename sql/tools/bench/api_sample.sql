-- grain: one row per sampled trip: up to $trips_per_user trips of each of up to $users users
-- params: $users INTEGER, $trips_per_user INTEGER, $seed BIGINT
-- Users and trips picked by hash (spread over the whole id range, not the first rows stored), so
-- the load generator's requests touch as many parts of the snapshot as real traffic would.
with users as (
    select user_id, any_value(org_user_id) as org_user_id
    from trips
    group by user_id
    order by hash(user_id, $seed::bigint)
    limit $users
),

ranked as (
    select
        u.org_user_id,
        t.trip_id,
        row_number() over (partition by t.user_id order by hash(t.trip_id, $seed::bigint)) as pick
    from trips as t
    join users as u on u.user_id = t.user_id
)

select org_user_id, trip_id
from ranked
where pick <= $trips_per_user
order by hash(org_user_id, trip_id, $seed::bigint)
