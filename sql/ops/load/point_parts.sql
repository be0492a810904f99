-- grain: one row per part of a file's loadable records, in line order, each holding at most
--        $max_points points (a record with more is a part of its own)
-- reads: int_point_values
-- params: $max_points BIGINT
-- int_points' window holds a part at a time: a file of any size is derived within the memory limit.
with sizes as (
    select line_no, count(*) as n
    from int_point_values
    group by line_no
),

placed as (
    select line_no, (sum(n) over (order by line_no rows between unbounded preceding and current row) - n) // $max_points as part
    from sizes
)

select min(line_no) as first_line, max(line_no) as last_line
from placed
group by part
order by first_line
