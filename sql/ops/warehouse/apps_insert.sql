-- One app of the apps file, mirrored into the table the models join.
-- writes: apps
-- params: $app_id VARCHAR, $name VARCHAR, $time_zone VARCHAR
insert into apps values ($app_id, $name, $time_zone)
