-- The database `use` names now (a step that works in an attached database switches back to it
-- after; a compaction copies it by name).
-- grain: one row
select current_database() as db
