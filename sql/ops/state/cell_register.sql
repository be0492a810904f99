-- a cell, registered by its first job started with --cell; nothing when it is known
insert into cells (name, registered_at, accepting, drivers) values ($name, $now, 1, 0)
on conflict do nothing
