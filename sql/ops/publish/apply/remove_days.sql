-- The slot's statistics of the changed user-days go (with changed statistics).
-- params: none (reads changed_days, sql/ops/publish/apply/scope.sql)

delete from slot.stats_daily as s using changed_days as c
where s.app_id = c.app_id and s.user_id = c.user_id and s.stat_date = c.stat_date;
