-- a cell's post of one app and date: $rows, a JSON array of {interval_days, safety_score, drivers}
insert into cell_score_counts (cell, app_id, evaluation_date, interval_days, safety_score, drivers, seq)
select $cell, $app_id, $evaluation_date, json_extract(value, '$.interval_days'),
       json_extract(value, '$.safety_score'), json_extract(value, '$.drivers'), $seq
from json_each($rows)
