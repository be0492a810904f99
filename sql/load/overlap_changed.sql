-- One row: how many stored trips load/overlap_judge.sql changed.
select count(*)::integer as n from overlap_judged
