-- grain: the move of one driver in transit (none when it is not moving)
select app_id, platform_user_id, from_cell, to_cell, move_id, moved_at, exported_version, arrived_version, arrived_at
from driver_moves
where app_id = $app_id and platform_user_id = $platform_user_id
