-- One meta value of the database in use (none when the key is not there).
-- grain: at most one row
-- params: $key VARCHAR
select value from meta where key = $key
