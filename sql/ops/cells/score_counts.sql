-- A cell's drivers with a trip per window and stored score, for one app and date: what it posts
-- for every cell to rank against (src/cells/rank.ts).
-- grain: one row per interval_days and safety_score
-- params: $app_id, $evaluation_date (YYYY-MM-DD)
select interval_days, safety_score, count(*)::bigint as drivers
from safety_scores
where app_id = $app_id and evaluation_date = $evaluation_date::date and count_trips >= 1
group by interval_days, safety_score
order by interval_days, safety_score
