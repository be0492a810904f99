-- The database `use` names now: the steps that work in an attached slot switch back to it after.
-- grain: one row
select current_database() as db
