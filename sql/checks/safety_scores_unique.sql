-- check: one score per app, user, interval and evaluation date.
-- changes: safety_scores
-- params: $since BIGINT
select app_id, user_id, interval_days, evaluation_date, count(*) as copies
from safety_scores
where version > $since or $since = 0
group by app_id, user_id, interval_days, evaluation_date
having count(*) > 1
