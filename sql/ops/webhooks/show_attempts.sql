-- grain: one row per attempt of one event, in order
-- params: $seq BIGINT
select attempt, kind, epoch_ms(started_at) as started_ms, duration_ms, status_code, error, url
from attempts
where seq = $seq
order by started_at, attempt
