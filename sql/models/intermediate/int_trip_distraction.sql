-- grain: one row per loadable trip with at least one phone event overlapping it
-- reads: int_events, int_loadable_records
-- Seconds covered by the union of the trip's phone_call and phone_usage intervals, clipped to the
-- trip (docs/decisions.md, Statistics and scores, distractedDriving): overlapping events count once.
with clipped as (
    select
        e.app_id,
        e.trip_id,
        greatest(e.started_at, r.started_at) as from_at,
        least(e.ended_at, r.ended_at) as to_at
    from int_events as e
    join int_loadable_records as r
        on r.app_id = e.app_id and r.trip_id = e.trip_id
    where e.reason is null and e.type in ('phone_call', 'phone_usage')
),

positive as (
    select * from clipped where to_at > from_at
),

marked as (
    select
        *,
        max(to_at) over (
            partition by app_id, trip_id order by from_at, to_at
            rows between unbounded preceding and 1 preceding
        ) as covered_until
    from positive
),

islands as (
    select
        *,
        sum(case when covered_until is null or from_at > covered_until then 1 else 0 end) over (
            partition by app_id, trip_id order by from_at, to_at rows unbounded preceding
        ) as island
    from marked
),

merged as (
    select app_id, trip_id, island, min(from_at) as from_at, max(to_at) as to_at
    from islands
    group by app_id, trip_id, island
)

select app_id, trip_id, sum(epoch(to_at) - epoch(from_at)) as distracted_seconds
from merged
group by app_id, trip_id
