-- The id of the last batch of the ledger (0 before any).
-- grain: one row
-- reads: batches
select coalesce(max(batch_id), 0) as b from batches
