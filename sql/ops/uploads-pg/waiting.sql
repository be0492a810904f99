-- The oldest uploads waiting for a load, in acceptance order: up to $limit of them, as long as the
-- content before each is under $max_bytes (so at least one, and at most one piece over): an upload
-- is at most the SDK's body limit, but a partner file's records forwarded to their cell come in
-- pieces of up to 16 MiB. With a cell, its
-- drivers' uploads and those of no cell; without, every upload.
-- grain: one row per upload waiting
-- params: $limit INTEGER, $max_bytes BIGINT, $cell TEXT (null: no cells)
with oldest as (
    select seq, octet_length(content) as bytes
    from uploads.waiting
    where $cell::text is null or cell = $cell::text or cell is null
    order by seq
    limit $limit
),
page as (
    select seq, sum(bytes) over (order by seq) - bytes as before
    from oldest
)
select w.seq, w.name, w.content
from uploads.waiting as w
join page as p on p.seq = w.seq
where p.before < $max_bytes::bigint
order by w.seq;
