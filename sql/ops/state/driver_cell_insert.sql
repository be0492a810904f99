-- a driver given a cell; nothing when it has one (given by another process first)
insert into driver_cells (app_id, platform_user_id, cell, assigned_at) values ($app_id, $platform_user_id, $cell, $now)
on conflict do nothing
