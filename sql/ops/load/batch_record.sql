-- One batch of the ledger (a file's load or re-derivation) with its report.
-- writes: batches
-- params: $batch_id BIGINT, $kind VARCHAR ('load', 'rederive'), $path VARCHAR, $version BIGINT,
--   $started TIMESTAMPTZ, $report VARCHAR (JSON)
insert into batches values ($batch_id, $kind, $path, $version, $started, now(), $report::json)
