-- grain: one row: the number of points a Parquet file holds, from its footer alone
-- params: $path VARCHAR
-- Each leaf of the point struct counts every point (writers name the list's levels differently:
-- list/element, array, bag...), so the largest leaf count is the file's.
select coalesce(max(n), 0)::bigint as points
from (
    select path_in_schema, sum(num_values) as n
    from parquet_metadata($path)
    where path_in_schema like 'points,%'
    group by path_in_schema
)
