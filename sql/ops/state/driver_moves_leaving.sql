-- grain: one row per driver moved away from $cell that the cell may erase now: its package arrived
-- at or before $arrived_before (the grace given the API machines to follow the target), or its
-- account was deleted meanwhile (an erasure waits for no grace)
select m.app_id, m.platform_user_id, a.org_user_id, m.from_cell, m.to_cell, m.move_id, m.moved_at, m.exported_version,
    m.arrived_version, m.arrived_at,
    case when a.deleted_at is not null then 1 else 0 end as deleted
from driver_moves as m
left join accounts as a on a.app_id = m.app_id and a.platform_user_id = m.platform_user_id
where m.from_cell = $cell
    and ((m.arrived_version is not null and m.arrived_at <= $arrived_before) or a.deleted_at is not null)
order by m.app_id, m.platform_user_id
