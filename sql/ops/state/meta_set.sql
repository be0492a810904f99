insert into state_meta (name, value) values ($name, $value) on conflict (name) do update set value = excluded.value
