-- Reads each served table's user_id column once, before the first request needs it (SQL serving
-- only: a snapshot with a serving pack warms the pack's pages instead).
-- grain: one row
select
    (select count(*) from trips where user_id = 0) as trips,
    (select count(*) from trip_events where user_id = 0) as trip_events,
    (select count(*) from stats_daily where user_id = 0) as stats_daily,
    (select count(*) from safety_scores where user_id = 0) as safety_scores
