-- grain: one row per window and stored score: the drivers with a trip of every other cell
select interval_days, safety_score, sum(drivers) as drivers
from cell_score_counts
where app_id = $app_id and evaluation_date = $evaluation_date and cell <> $cell
group by interval_days, safety_score
