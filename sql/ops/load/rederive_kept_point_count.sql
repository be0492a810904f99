-- How many point rows of kept trips one partition's earlier files hold (rederive_kept_points.sql).
-- grain: one row
-- reads: rederive_kept_point_rows (temp)
select count(*)::int as n from rederive_kept_point_rows
