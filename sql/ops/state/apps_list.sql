-- grain: one row per app, oldest first (the order apps.json kept)
select doc from apps order by created_at, app_id
