-- Adds one meta key with its first value; a key that is there keeps its value.
-- writes: meta
-- params: $key VARCHAR, $value VARCHAR
insert into meta values ($key, $value) on conflict do nothing
