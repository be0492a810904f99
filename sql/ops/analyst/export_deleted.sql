-- The accounts deleted but not yet purged: never exported (docs/decisions.md, Deletion).
-- writes: export_deleted (temp)
create or replace temp table export_deleted (app_id varchar, user_id bigint)
