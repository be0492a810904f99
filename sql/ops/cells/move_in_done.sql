-- grain: the import of one package, if this warehouse made it
-- params: $move_id
select version from cell_moves_in where move_id = $move_id
