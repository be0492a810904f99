-- SDK uploads accepted by any API machine (with DATABASE_URL), waiting for the job machine's load to
-- take them into its landing area: in a schema of their own beside the state store's tables.
-- grain: one row per upload accepted (answered 202) and not yet taken in
create schema if not exists uploads;

create table if not exists uploads.waiting (
    seq bigint generated always as identity primary key,
    -- the landing file's name the API gives it (src/load/uploads.ts, uploadFileName): the load
    -- writes it under this name, so a take-in done twice writes the same file
    name text not null unique,
    app_id text not null,
    accepted_at timestamptz not null,
    -- the landing file's bytes, exactly
    content bytea not null
);

-- the cell of the upload's driver (docs/decisions.md, Cells), whose load takes it in; null: any
-- load takes it (no cells, or an upload accepted before its driver had one), and splits it if need be
alter table uploads.waiting add column if not exists cell text;
create index if not exists waiting_cell on uploads.waiting (cell, seq);
