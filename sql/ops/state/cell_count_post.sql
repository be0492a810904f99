-- a cell posted its counts of one app and date (perhaps none)
insert into cell_count_posts (cell, app_id, evaluation_date, seq) values ($cell, $app_id, $evaluation_date, $seq)
on conflict (cell, app_id, evaluation_date) do update set seq = excluded.seq
