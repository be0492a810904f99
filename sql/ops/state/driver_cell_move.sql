-- a driver moved from one cell to another (jobs/cells.js move), only while it is in $from
update driver_cells set cell = $to, assigned_at = $now
where app_id = $app_id and platform_user_id = $platform_user_id and cell = $from
