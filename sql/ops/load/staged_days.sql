-- The dates the staged file's trips start on (one date: its points go straight into that day's folder).
-- grain: one row per trip date
-- reads: int_trips (staged)
select distinct trip_date::varchar as d from int_trips
