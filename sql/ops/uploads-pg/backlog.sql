-- What waits to be taken in by a load (with a cell: by that cell's), for /metrics and the watch's wake-up poll.
-- grain: one row
-- params: $cell TEXT (null: every upload)
select count(*)::bigint as waiting,
       extract(epoch from (now() - min(accepted_at)))::float8 as oldest_seconds
from uploads.waiting
where $cell::text is null or cell = $cell::text or cell is null;
