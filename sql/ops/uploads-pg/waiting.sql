-- The oldest uploads waiting, in acceptance order, for the load to take in.
-- grain: one row per upload waiting
-- params: $limit INTEGER
select seq, name, content
from uploads.waiting
order by seq
limit $limit;
