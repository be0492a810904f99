-- grain: one row per merged raw-points file (trip date, name) the index knows
-- reads: points_merged
select distinct trip_date::varchar as day, name from points_merged
