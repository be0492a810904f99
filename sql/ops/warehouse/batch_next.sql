-- The id the next batch of the ledger takes.
-- grain: one row
-- reads: batches
select coalesce(max(batch_id), 0) + 1 as id from batches
