-- Sets one meta value of the database in use, adding the key if it is not there.
-- writes: meta
-- params: $key VARCHAR, $value VARCHAR
insert or replace into meta values ($key, $value)
