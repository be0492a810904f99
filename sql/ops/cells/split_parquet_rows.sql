-- The records of the file being split that stay in (or go to) cell $cell: its drivers' records,
-- and, when $keep_unknown, those naming no driver with a cell (the load judges them).
-- params: $source, $cell, $keep_unknown
create or replace temp table split_rows as
select p.*
from read_parquet($source) as p
left join split_cells as c
    on c.app_id = try_cast(p.appId as varchar) and c.user_id = try_cast(p.platformUserId as bigint)
where c.cell = $cell or ($keep_unknown and c.cell is null)
