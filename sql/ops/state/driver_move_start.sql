-- a driver's move begun (src/cells/move-record.ts), in the transaction that changes its cell: a
-- move of a driver already in transit starts over from where its data is now
insert into driver_moves (app_id, platform_user_id, from_cell, to_cell, move_id, moved_at, exported_version, arrived_version, arrived_at)
values ($app_id, $platform_user_id, $from_cell, $to_cell, $move_id, $now, null, null, null)
on conflict (app_id, platform_user_id) do update set
    from_cell = excluded.from_cell, to_cell = excluded.to_cell, move_id = excluded.move_id,
    moved_at = excluded.moved_at, exported_version = null, arrived_version = null, arrived_at = null
