-- The time range, per account, in which the merged file may change whether a trip overlaps an
-- earlier one (docs/decisions.md, Trip records (load), overlapping trips): the file's trips and the stored copies they replaced.
-- reads: int_trips, replaced_copies (sql/ops/load/merge_file.sql)
-- ops/load/overlap_widen.sql widens it until no trip that could take part lies across its ends.
create or replace temp table overlap_range as
select app_id, user_id, min(started_at) as range_start, max(ended_at) as range_end
from (
    select app_id, user_id, started_at, ended_at from int_trips
    union all
    select app_id, user_id, started_at, ended_at from replaced_copies
)
group by app_id, user_id;
