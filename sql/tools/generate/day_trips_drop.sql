-- The day table of the generator's last block, dropped once every day file is written.
-- writes: gen_day_trips
drop table if exists gen_day_trips
