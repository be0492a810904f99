-- grain: one row per user and day of one app in a published slot, each user's days together,
--        oldest first: the serving pack's statistics section. The API sums these into
--        day/week/month periods exactly as models/marts/statistics_periods.sql does (src/serving/periods.ts).
-- reads: stats_daily
-- params: $app_id VARCHAR, $buckets INTEGER,
--         $bucket INTEGER (one build step's users, as in models/serving/pack_trips.sql),
--         $since BIGINT (only the days written after that version, for a delta layer; -1: all)
select
    user_id,
    (stat_date - date '1970-01-01')::double as sort_key,
    '' as trip_id,
    to_json([
        count_trips::double, mileage_m::double, duration_s::double, count_events::double,
        max_speed_kmh, score_x_mileage, score_sum
    ])::varchar as payload,
    '' as extra
from stats_daily
where app_id = $app_id and user_id % $buckets = $bucket and version > $since
order by user_id, stat_date
