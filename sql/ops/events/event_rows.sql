-- The run's events before they become lines of the pending file: one insert per kind, each from its
-- own sql/ops/events/*.sql in that file's order (trip.created, trip.updated, safety_score.updated,
-- user.deleted), so that the file, read in insertion order, lists them kind by kind.
-- writes: event_rows (temp)
create or replace temp table event_rows (
    part integer not null,
    id varchar not null,
    type varchar not null,
    app_id varchar not null,
    data json not null
);
