-- params: $interval_days, $safety_score, $drivers (lists of equal length)
insert into peer_score_counts
select unnest($interval_days::integer[]), unnest($safety_score::double[]), unnest($drivers::bigint[])
