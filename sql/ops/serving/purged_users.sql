-- The users purged since the served version (temp table serving_purged, changed_since.sql), whose
-- rows the serving pack's layers drop.
-- grain: one row per purged user
select app_id, user_id::double as user_id from serving_purged
