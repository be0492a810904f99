-- A moved driver's raw points of one trip date and loaded file, from that file's own points files
-- writes: move_points
-- params: $files VARCHAR[], $app_id, $trip_ids VARCHAR[], $trip_date DATE, $file_key
insert into move_points
select app_id, trip_id, t, lat, lng, speed, $trip_date::date, $file_key
from read_parquet($files)
where app_id = $app_id and list_contains($trip_ids, trip_id)
