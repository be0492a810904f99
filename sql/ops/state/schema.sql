-- The shared state store (docs/decisions.md, Storage and processes): what API processes write and every process reads.
-- One text for SQLite and PostgreSQL (bigint: 64-bit in both; text: unbounded in both).

-- Facts about the store itself (when the data folder's files were migrated into it).
create table if not exists state_meta (
    name text primary key,
    value text not null
);

-- A counter per kind of state, raised by every change, so that readers may cache and check it cheaply.
create table if not exists state_versions (
    name text primary key,
    version bigint not null
);
insert into state_versions (name, version) values ('apps', 0) on conflict do nothing;

-- One row per app: its JSON document (src/apps/store.ts, App), so that new fields need no schema change.
create table if not exists apps (
    app_id text primary key,
    created_at text not null,
    doc text not null
);

-- An account maps (app_id, org_user_id) to a platform user id; a deleted account keeps its row
-- (deleted_at set) so its id is never handed out again. At most one active account per user.
create table if not exists accounts (
    platform_user_id bigint primary key,
    app_id text not null,
    org_user_id text not null,
    created_at text not null,
    deleted_at text
);
create unique index if not exists accounts_active on accounts (app_id, org_user_id) where deleted_at is null;

-- Passport tokens, stored only as SHA-256 hashes; expires_ms: epoch milliseconds.
create table if not exists tokens (
    token_hash text primary key,
    app_id text not null,
    platform_user_id bigint not null,
    issued_at text not null,
    expires_ms bigint not null
);
create index if not exists tokens_user on tokens (platform_user_id);

-- Who does a one-at-a-time job (the webhook deliverer) until expires_ms (epoch milliseconds).
create table if not exists leases (
    name text primary key,
    holder text not null,
    expires_ms bigint not null
);

-- A DELETE of an account, recorded in the same transaction that marks the account deleted (so it
-- is durable before the 200), until a job's purge has removed the user's data (docs/decisions.md,
-- Deletion). id: a UUID, or the request file's name for one an earlier release wrote (so taking
-- the files in twice adds nothing). Once purged: purged_at and the user's trips removed are set,
-- and the org user id goes, as it goes from the account (sql/ops/state/account_erase.sql).
create table if not exists deletion_requests (
    id text primary key,
    app_id text not null,
    platform_user_id bigint not null,
    org_user_id text,
    requested_at text not null,
    purged_at text,
    purged_trips bigint
);
create index if not exists deletion_requests_pending on deletion_requests (requested_at, id) where purged_at is null;

-- Cells (docs/decisions.md, Cells): a job machine with its own warehouse, registered by its first
-- job started with --cell. accepting: new drivers may be given to it; drivers: how many it was given
-- (what the least-loaded rule compares, without counting driver_cells).
create table if not exists cells (
    name text primary key,
    registered_at text not null,
    accepting integer not null default 1,
    drivers bigint not null default 0
);

-- The cell each driver's data lives in, given once (when the account is made, or when a record of
-- a driver without one is first seen) and changed only by a move (jobs/cells.js move). Never
-- derived from the id: a new cell takes new drivers without any old one changing cell.
create table if not exists driver_cells (
    app_id text not null,
    platform_user_id bigint not null,
    cell text not null,
    assigned_at text not null,
    primary key (app_id, platform_user_id)
);

-- A driver being moved from one cell to another (jobs/cells.js move; docs/decisions.md, Cells):
-- driver_cells already names the target, and the API answers the driver from from_cell until its
-- copy of to_cell serves a version >= arrived_version (null: the package has not arrived yet).
-- exported_version: the source warehouse's version when the package was written (rows of the
-- driver written later go in a further package before the source erases it); move_id names the
-- package. The source erases the driver once arrived_at is DRIVING_CELL_MOVE_GRACE old, then the
-- row goes: one row per driver in transit.
create table if not exists driver_moves (
    app_id text not null,
    platform_user_id bigint not null,
    from_cell text not null,
    to_cell text not null,
    move_id text not null,
    moved_at text not null,
    exported_version bigint,
    arrived_version bigint,
    arrived_at text,
    primary key (app_id, platform_user_id)
);

-- Each cell's count of drivers with a trip per stored safety score, per app, date and window: what
-- every cell ranks its own drivers against, so that the percentile ranks the app's drivers of
-- every cell (sql/ops/score/rank_across_cells.sql). seq: the post's number (cell_counts_seq), so a
-- cell sees which posts came after its last ranking.
create table if not exists cell_score_counts (
    cell text not null,
    app_id text not null,
    evaluation_date text not null,
    interval_days integer not null,
    safety_score double precision not null,
    drivers bigint not null,
    seq bigint not null
);
create index if not exists cell_score_counts_key on cell_score_counts (app_id, evaluation_date, cell);

-- The last post of each cell's counts for one app and date (a post may leave no count at all).
create table if not exists cell_count_posts (
    cell text not null,
    app_id text not null,
    evaluation_date text not null,
    seq bigint not null,
    primary key (cell, app_id, evaluation_date)
);
create index if not exists cell_count_posts_seq on cell_count_posts (seq);
insert into state_versions (name, version) values ('cell_counts', 0) on conflict do nothing;
