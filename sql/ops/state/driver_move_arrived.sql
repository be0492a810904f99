-- a move's package imported by the target: the version of the target's publish that serves it
update driver_moves set arrived_version = $arrived_version, arrived_at = $now
where app_id = $app_id and platform_user_id = $platform_user_id and to_cell = $to_cell and move_id = $move_id
    and arrived_version is null
