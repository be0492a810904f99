-- grain: one row per token hash of a passport.duckdb of an earlier release (expired ones too: a
-- sweep drops them), times as the shared state store keeps them
select
    token_hash,
    app_id,
    platform_user_id,
    strftime(issued_at at time zone 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') as issued_at,
    epoch_ms(expires_at) as expires_ms
from tokens
order by token_hash
