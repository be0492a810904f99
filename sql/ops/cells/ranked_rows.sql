-- The rows rank_across_cells.sql changed (written with the run's version).
-- grain: one row
-- params: $app_id, $evaluation_date, $version
select count(*)::integer as n
from safety_scores
where app_id = $app_id and evaluation_date = $evaluation_date::date and version = $version
