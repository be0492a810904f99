-- The kept points read from a re-derived file's merged files (points_kept_merged.sql) added to
-- those read from its unmerged ones (sql/ops/load/rederive_kept_points.sql), once each.
-- reads: rederive_kept_merged_rows
-- writes: rederive_kept_point_rows
insert into rederive_kept_point_rows
select * from rederive_kept_merged_rows
except
select * from rederive_kept_point_rows;

drop table rederive_kept_merged_rows
