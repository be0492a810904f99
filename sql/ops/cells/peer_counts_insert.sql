-- params: $interval_days INTEGER[], $safety_score VARCHAR (a JSON array of numbers), $drivers BIGINT[] (of equal length)
insert into peer_score_counts
select unnest($interval_days::integer[]), unnest(cast($safety_score::json as double[])), unnest($drivers::bigint[])
