-- a move's package (move_id) sent to the target: the source warehouse's version it holds the rows of
update driver_moves set move_id = $move_id, exported_version = $exported_version, arrived_version = null, arrived_at = null
where app_id = $app_id and platform_user_id = $platform_user_id and from_cell = $from_cell
