-- grain: the holder of a token while it resolves: not expired at $now_ms, of an account not deleted
select t.app_id, t.platform_user_id, a.org_user_id
from tokens as t
join accounts as a on a.platform_user_id = t.platform_user_id and a.app_id = t.app_id
where t.token_hash = $token_hash and t.expires_ms > $now_ms and a.deleted_at is null
