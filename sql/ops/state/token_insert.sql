-- params: $token_hash (SHA-256 hex; the token itself is never stored)
insert into tokens (token_hash, app_id, platform_user_id, issued_at, expires_ms)
values ($token_hash, $app_id, $platform_user_id, $issued_at, $expires_ms)
on conflict do nothing
