-- a move finished: the source erased the driver (only the move it erased for, by its package)
delete from driver_moves
where app_id = $app_id and platform_user_id = $platform_user_id and from_cell = $from_cell and move_id = $move_id
