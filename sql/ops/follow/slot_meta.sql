-- The version and warehouse a published slot says it holds: the follower (src/follow/verify.ts)
-- checks a slot it copied against the manifest that names it.
-- grain: one row per meta key asked for (version, warehouse_id)
select key, value from meta where key in ('version', 'warehouse_id')
