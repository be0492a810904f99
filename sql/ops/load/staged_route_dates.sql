-- The dates the staged file's trips start on from the routes' oldest kept date: a route file is
-- written for each (route_points_staged.sql).
-- grain: one row per trip date, in order
-- reads: int_trips (staged)
-- params: $oldest DATE
select distinct trip_date::varchar as d from int_trips where trip_date >= $oldest::date order by 1
