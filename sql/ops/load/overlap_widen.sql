-- Widens each account's overlap_range to cover every trip that could take part in the overlap rule
-- (one not abnormal for another reason) and shares time with the range. Run until no range grows:
-- then no trip outside a range shares a moment with a trip inside it, so judging the trips inside
-- in arrival order gives what judging all of the account's trips would.
-- reads: overlap_range, trips; writes: overlap_range_next (src/load/overlaps.ts compares and swaps)
-- params: $from, $to TIMESTAMPTZ: the union of the ranges (bounds the scan by the zone maps)
create or replace temp table overlap_range_next as
select
    r.app_id,
    r.user_id,
    least(r.range_start, min(t.started_at)) as range_start,
    greatest(r.range_end, max(t.ended_at)) as range_end
from overlap_range as r
left join trips as t
    on t.app_id = r.app_id and t.user_id = r.user_id
    and t.started_at < r.range_end and t.ended_at > r.range_start
    and t.started_at < $to::timestamptz and t.ended_at > $from::timestamptz
    and t.abnormal_reason in ('', 'overlapping_trip')
group by r.app_id, r.user_id, r.range_start, r.range_end;
