-- check: one statistics row per app, user and day.
-- changes: stats_daily
-- params: $since BIGINT
select app_id, user_id, stat_date, count(*) as copies
from stats_daily
where (app_id, user_id, stat_date) in (select (app_id, user_id, stat_date) from stats_daily where version > $since)
group by app_id, user_id, stat_date
having count(*) > 1
