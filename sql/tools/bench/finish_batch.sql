-- Closes one synthesized batch: the statistics scope, the events it must not announce, its ledger row.
-- reads: trips (rows of this batch)
-- params: $version BIGINT, $batch_id BIGINT, $loaded_at TIMESTAMPTZ, $source_file VARCHAR,
--         $report VARCHAR (JSON)
-- stats_daily itself is inserted from sql/models/marts/stats_daily.sql over scope_user_days, the same
-- model the load uses, so statistics equal the synthesized trips' sums by construction.

create or replace temp table scope_user_days as
select distinct app_id, user_id, trip_date from trips where version = $version;

-- History is not news: the deliverer must not get millions of trip.created events for it, so its
-- trips count as announced (the load's emitEvents then announces only what is loaded later).
insert into announced_trips (app_id, trip_id, announced_version)
select app_id, trip_id, $version from trips where version = $version;

insert into batches values ($batch_id, 'bench-history', $source_file, $version, $loaded_at::timestamptz, now(), $report::json);
