-- grain: one row per driver of the cell (the purge keeps to its cell's deletion requests)
select app_id, platform_user_id from driver_cells where cell = $cell
