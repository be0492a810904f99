-- The last post of the other cells this warehouse ranked against (0: none yet).
-- grain: one row
select coalesce(max(value::bigint), 0) as seq from meta where key = 'cells_ranked_seq'
