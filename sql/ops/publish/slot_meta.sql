-- The version and warehouse the slot attached as `slot` says it holds (src/publish/settle.ts
-- checks it before bringing the slot up to date).
-- grain: one row per meta key asked for (version, warehouse_id)
select key, value from slot.meta where key in ('version', 'warehouse_id')
