-- a cell's post of one app and date: $rows, a JSON array of {interval_days, safety_score, drivers}
insert into cell_score_counts (cell, app_id, evaluation_date, interval_days, safety_score, drivers, seq)
select $cell, $app_id, $evaluation_date, r.interval_days, r.safety_score, r.drivers, $seq
from json_to_recordset($rows::json) as r(interval_days integer, safety_score double precision, drivers bigint)
