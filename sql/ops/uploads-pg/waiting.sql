-- The oldest uploads waiting for a load, in acceptance order: with a cell, its drivers' uploads and
-- those of no cell; without, every upload.
-- grain: one row per upload waiting
-- params: $limit INTEGER, $cell TEXT (null: no cells)
select seq, name, content
from uploads.waiting
where $cell::text is null or cell = $cell::text or cell is null
order by seq
limit $limit;
