-- grain: one row per passport token that resolves at $now (valid, of an account not deleted)
-- params: $now TIMESTAMPTZ
-- the API loads these into its in-memory token index at start (src/passport/token-index.ts)
select
    t.token_hash,
    a.app_id,
    a.platform_user_id,
    a.org_user_id,
    epoch_ms(t.expires_at) as expires_ms
from tokens as t
join accounts as a on a.platform_user_id = t.platform_user_id and a.app_id = t.app_id
where a.deleted_at is null and t.expires_at > $now::timestamptz
