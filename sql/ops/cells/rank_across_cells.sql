-- The percentile of one app's drivers as of one date ranked among the drivers of every cell: the
-- same definition as sql/models/marts/safety_scores.sql (per window, over the drivers with a trip,
-- by the stored score, ties sharing the lowest rank, (rank - 1) / (drivers - 1), 100 alone), with
-- the counts of this cell's rows and of the other cells' (peer_score_counts) added together. Only
-- rows whose percentile changes are written, with the run's version, so the publish copies them.
-- params: $app_id, $evaluation_date, $version
update safety_scores as s
set percentile = r.percentile, version = $version
from (
    with counts as (
        select interval_days, safety_score, count(*)::bigint as drivers
        from safety_scores
        where app_id = $app_id and evaluation_date = $evaluation_date::date and count_trips >= 1
        group by interval_days, safety_score
        union all
        select interval_days, safety_score, drivers from peer_score_counts
    ),
    totals as (
        select interval_days, safety_score, sum(drivers) as drivers from counts group by interval_days, safety_score
    ),
    ranks as (
        select
            interval_days,
            safety_score,
            coalesce(sum(drivers) over (
                partition by interval_days order by safety_score rows between unbounded preceding and 1 preceding
            ), 0) as below,
            sum(drivers) over (partition by interval_days) as partition_drivers
        from totals
    )
    select
        interval_days,
        safety_score,
        case
            when partition_drivers = 1 then 100.0
            else round(100.0 * (below::double / (partition_drivers - 1)::double), 2)
        end as percentile
    from ranks
) as r
where s.app_id = $app_id
    and s.evaluation_date = $evaluation_date::date
    and s.count_trips >= 1
    and s.interval_days = r.interval_days
    and s.safety_score = r.safety_score
    and s.percentile is distinct from r.percentile
