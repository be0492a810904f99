-- grain: one row per calendar period (day, ISO week Monday-Sunday, month) overlapping the range,
--        clipped to it, ascending; periods without trips included with zeros (docs/decisions.md, Statistics and scores)
-- reads: stats_daily
-- params: $app_id VARCHAR, $user_id BIGINT, $period VARCHAR ('day' | 'week' | 'month'),
--         $start_date DATE, $end_date DATE
with bounds as (
    select $start_date::date as first_day, $end_date::date as last_day, $period::varchar as period
),

steps as (
    select
        first_day,
        last_day,
        case period when 'day' then interval 1 day when 'week' then interval 7 day else interval 1 month end as step,
        date_trunc(period, first_day)::date as first_period
    from bounds
),

periods as (
    select
        greatest(p::date, first_day) as period_start,
        least((p + step - interval 1 day)::date, last_day) as period_end
    from steps, unnest(generate_series(first_period::timestamp, last_day::timestamp, step)) as t(p)
),

days as (
    select *
    from stats_daily
    where app_id = $app_id and user_id = $user_id
        and stat_date between $start_date::date and $end_date::date
),

final as (
    select
        p.period_start,
        p.period_end,
        coalesce(sum(d.count_trips), 0)::integer as count_trips,
        coalesce(sum(d.mileage_m), 0)::bigint as mileage_m,
        coalesce(sum(d.count_events), 0)::bigint as count_events,
        coalesce(sum(d.duration_s), 0)::bigint as duration_s,
        coalesce(max(d.max_speed_kmh), 0) as max_speed_kmh,
        share(coalesce(sum(d.mileage_m), 0) * 3.6, coalesce(sum(d.duration_s), 0)) as avg_speed_kmh,
        case
            when coalesce(sum(d.mileage_m), 0) > 0 then sum(d.score_x_mileage) / sum(d.mileage_m)
            when coalesce(sum(d.count_trips), 0) > 0 then sum(d.score_sum) / sum(d.count_trips)
            else 0
        end as score
    from periods as p
    left join days as d on d.stat_date between p.period_start and p.period_end
    group by p.period_start, p.period_end
)

select * from final order by period_start
