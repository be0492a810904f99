-- check: every user-day's statistics equal the sums of that day's normal trips (docs/decisions.md, Statistics and scores), and
-- every normal trip's day has a statistics row.
-- changes: stats_daily, trips
-- params: $since BIGINT
with scope as (
    select app_id, user_id, stat_date from stats_daily where version > $since
    union
    select app_id, user_id, trip_date from trips where version > $since
),

trip_sums as (
    select
        t.app_id, t.user_id, t.trip_date as stat_date,
        count(*) as count_trips, sum(t.mileage_m) as mileage_m, sum(t.duration_s) as duration_s,
        sum(t.count_events) as count_events
    from trips as t
    semi join scope as s on s.app_id = t.app_id and s.user_id = t.user_id and s.stat_date = t.trip_date
    where t.is_normal
    group by all
),

stats as (
    select d.*
    from stats_daily as d
    semi join scope as s on s.app_id = d.app_id and s.user_id = d.user_id and s.stat_date = d.stat_date
)

select
    coalesce(s.app_id, t.app_id) as app_id,
    coalesce(s.user_id, t.user_id) as user_id,
    coalesce(s.stat_date, t.stat_date) as stat_date,
    s.count_trips as stats_trips,
    t.count_trips as trip_count
from stats as s
full join trip_sums as t
    on t.app_id = s.app_id and t.user_id = s.user_id and t.stat_date = s.stat_date
where coalesce(s.count_trips, 0) <> coalesce(t.count_trips, 0)
    or coalesce(s.mileage_m, 0) <> coalesce(t.mileage_m, 0)
    or coalesce(s.duration_s, 0) <> coalesce(t.duration_s, 0)
    or coalesce(s.count_events, 0) <> coalesce(t.count_events, 0)
