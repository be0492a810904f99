-- Every key the meta table of the database in use holds (the warehouse's, or a slot's after
-- `use slot`): a handful of rows, read whole by src/warehouse/meta.ts.
-- grain: one row per meta key
select key, value from meta
