-- params: $app_ids, $user_ids, $cells (lists of equal length)
insert into split_cells select unnest($app_ids::varchar[]), unnest($user_ids::bigint[]), unnest($cells::varchar[])
