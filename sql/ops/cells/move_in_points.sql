-- A moved driver's raw points of one trip date and loaded file, of the trips the target does not
-- hold already (one it holds keeps its own points), in the order the load writes points
-- reads: move_in_points
-- params: $trip_date DATE, $file_key
create or replace temp table move_in_points_part as
select p.app_id, p.trip_id, p.t, p.lat, p.lng, p.speed
from move_in_points as p
anti join trips as t on t.app_id = p.app_id and t.trip_id = p.trip_id
where p.trip_date = $trip_date::date and p.file_key = $file_key
order by p.app_id, p.trip_id, p.t
