-- The loaded files a re-derivation takes, in their load order: by the load run (loaded_at), then
-- by batch within it (a re-derivation gives a file a new batch, in this same order).
-- params: $since VARCHAR (YYYY-MM-DD: files loaded on or after that UTC day; empty for all)
select file_key, path, batch_id, loaded_at
from loaded_files
where $since = '' or loaded_at >= $since::date::timestamptz
order by loaded_at, batch_id
