-- What waits to be taken in, for /metrics and the watch's wake-up poll.
-- grain: one row
select count(*)::bigint as waiting,
       extract(epoch from (now() - min(accepted_at)))::float8 as oldest_seconds
from uploads.waiting;
