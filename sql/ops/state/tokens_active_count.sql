select count(*) as n
from tokens as t
join accounts as a on a.platform_user_id = t.platform_user_id and a.app_id = t.app_id
where t.expires_ms > $now_ms and a.deleted_at is null
