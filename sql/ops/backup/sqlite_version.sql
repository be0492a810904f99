-- The SQLite release a state store's backup was made with, written in its manifest (runs on SQLite).
-- grain: one row
select sqlite_version() as v
