-- params: $seq
insert or replace into meta values ('cells_ranked_seq', $seq::varchar)
