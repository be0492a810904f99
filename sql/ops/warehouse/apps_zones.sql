-- Each app's time zone, which the serving pack records beside its rows.
-- grain: one row per app, by app_id
select app_id, time_zone from apps order by app_id
