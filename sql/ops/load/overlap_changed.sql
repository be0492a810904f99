-- One row: how many stored trips ops/load/overlap_judge.sql changed.
select count(*)::integer as n from overlap_judged
