-- Brings a warehouse written before quarantined records carried the facts behind their reason to
-- the current quarantine columns:
-- - detail: what the reason code alone does not say (time_out_of_range: the allowed range, the
--   load's clock it follows from, and the time outside it; sql/ops/load/merge_file.sql). NULL for
--   other reasons and for rows quarantined before.
alter table quarantine add column if not exists detail varchar;
