-- The passport store: owned by the API process (docs/decisions.md, Deletion; Storage and processes).
-- An account maps (app_id, org_user_id) to a platform user id; a deleted account keeps its row
-- (deleted_at set) so its id is never handed out again.
create table if not exists accounts (
    platform_user_id bigint primary key,
    app_id varchar not null,
    org_user_id varchar not null,
    created_at timestamptz not null,
    deleted_at timestamptz
);

-- tokens are stored only as SHA-256 hashes
create table if not exists tokens (
    token_hash varchar primary key,
    app_id varchar not null,
    platform_user_id bigint not null,
    issued_at timestamptz not null,
    expires_at timestamptz not null
);

create index if not exists accounts_app_org on accounts (org_user_id);
create index if not exists tokens_user on tokens (platform_user_id);
