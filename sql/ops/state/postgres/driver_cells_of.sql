-- grain: one row per driver of $ids (a JSON array of platform user ids) given a cell
select platform_user_id, cell from driver_cells
where app_id = $app_id
  and platform_user_id in (select value::bigint from json_array_elements_text($ids::json))
