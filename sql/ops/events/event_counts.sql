-- How many events of each kind the run wrote to event_rows.
-- grain: one row per part (kind) with any event
select part, count(*)::integer as n from event_rows group by part
