-- grain: one row per attempt of one event, in order
-- params: $seq BIGINT
select attempt, kind, (extract(epoch from started_at) * 1000)::bigint as started_ms, duration_ms, status_code, error, url
from webhooks.attempts
where seq = $seq::bigint
order by started_at, attempt
