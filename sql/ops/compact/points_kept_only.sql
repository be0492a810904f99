-- The kept points of a re-derived file with no unmerged files on a date are those read from its
-- merged files (points_kept_merged.sql).
-- reads: rederive_kept_merged_rows
-- writes: rederive_kept_point_rows
create or replace temp table rederive_kept_point_rows as select * from rederive_kept_merged_rows;

drop table rederive_kept_merged_rows
