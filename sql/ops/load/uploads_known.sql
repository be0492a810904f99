-- grain: one row per given file key (SHA-256) the warehouse has loaded: as a file of its own, or as
--        an SDK upload inside a batch file that was loaded
-- reads: loaded_files, loaded_uploads
-- params: $keys VARCHAR[]
select file_key as key
from loaded_files
where list_contains($keys, file_key)
union
select u.upload_key as key
from loaded_uploads as u
semi join loaded_files as f on f.file_key = u.batch_key
where list_contains($keys, u.upload_key)
