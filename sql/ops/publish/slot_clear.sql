-- Empties the published tables of the slot in use (`use slot`): a slot of another warehouse, or
-- one that claims a future version, is rebuilt from zero (src/publish/standby-slot.ts).
-- writes: trips, trip_events, stats_daily, safety_scores
delete from trips;
delete from trip_events;
delete from stats_daily;
delete from safety_scores;
