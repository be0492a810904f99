-- Judges the overlap rule (docs/decisions.md, Trip records (load), overlapping trips) again for the trips of each account's overlap_range,
-- in arrival order: the trips whose status changes, in overlap_judged (ops/load/overlap_apply.sql
-- writes them). Runs inside the file's transaction, after its merge.
-- reads: overlap_range, trips; writes: overlap_judged
-- A trip takes part when no other rule made it abnormal. Walking the account's trips in arrival
-- order (the batch, then the line, where the load first accepted the trip), a trip is
-- overlapping_trip when its [startTime, endTime) shares more than 60 seconds with a trip walked
-- before it that stayed normal; an overlapping trip never makes a later one overlapping. The walk
-- is one step per trip of the longest account in range, usually one or two.
create or replace temp table overlap_judged as
with recursive candidates as (
    select
        t.app_id,
        t.user_id,
        t.trip_id,
        t.trip_date,
        t.abnormal_reason as stored_reason,
        epoch_us(t.started_at) as start_us,
        epoch_us(t.ended_at) as end_us,
        row_number() over (
            partition by t.app_id, t.user_id
            order by coalesce(t.arrival_batch_id, t.batch_id), coalesce(t.arrival_line, t.source_line), t.trip_id
        ) as step
    from trips as t
    join overlap_range as r
        on r.app_id = t.app_id and r.user_id = t.user_id
        and t.started_at < r.range_end and t.ended_at > r.range_start
    where t.abnormal_reason in ('', 'overlapping_trip')
),

walk as (
    select
        app_id, user_id, step, trip_id,
        false as is_overlapping,
        [{'start_us': start_us, 'end_us': end_us}] as kept
    from candidates
    where step = 1
    union all
    select
        app_id, user_id, step, trip_id, is_overlapping,
        case when is_overlapping then kept else list_append(kept, {'start_us': start_us, 'end_us': end_us}) end as kept
    from (
        select
            c.app_id, c.user_id, c.step, c.trip_id, c.start_us, c.end_us, w.kept,
            coalesce(list_bool_or(list_transform(w.kept,
                k -> least(k.end_us, c.end_us) - greatest(k.start_us, c.start_us) > 60000000)), false) as is_overlapping
        from walk as w
        join candidates as c on c.app_id = w.app_id and c.user_id = w.user_id and c.step = w.step + 1
    )
)

select
    c.app_id, c.user_id, c.trip_id, c.trip_date,
    case when w.is_overlapping then 'overlapping_trip' else '' end as abnormal_reason
from candidates as c
join walk as w on w.app_id = c.app_id and w.user_id = c.user_id and w.step = c.step
where c.stored_reason <> (case when w.is_overlapping then 'overlapping_trip' else '' end);
