-- The moved driver's trips the import added (move_import.sql's move_new_trips).
-- grain: one row
select count(*)::bigint as n from move_new_trips
