-- The staged points (write_points.sql, in for points) without their date: a file whose trips all
-- start on one day is written into that day's folder, which names the date.
-- grain: one row per kept point
select * exclude (trip_date) from ({{points}})
