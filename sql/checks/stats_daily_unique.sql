-- check: one statistics row per app, user and day.
-- changes: stats_daily
-- params: $since BIGINT
-- A semi join on the key's columns (as trips_unique.sql, for the same reason).
with written as (
    select distinct app_id, user_id, stat_date from stats_daily where version > $since
)

select s.app_id, s.user_id, s.stat_date, count(*) as copies
from stats_daily as s
semi join written as w on w.app_id = s.app_id and w.user_id = s.user_id and w.stat_date = s.stat_date
group by s.app_id, s.user_id, s.stat_date
having count(*) > 1
