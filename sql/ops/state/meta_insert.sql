-- the first writer's value stands (many processes may start at once)
insert into state_meta (name, value) values ($name, $value) on conflict (name) do nothing
