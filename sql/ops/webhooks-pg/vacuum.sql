-- The outbox's tables vacuumed, so the row versions of dropped events no longer hold their bytes
-- (the DuckDB outbox rewrites its file for the same reason). Outside a transaction, as VACUUM must be.
vacuum webhooks.events, webhooks.queue, webhooks.attempts
