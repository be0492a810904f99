-- grain: one row per given file key (SHA-256) the warehouse has loaded: as a file of its own, or as
--        an SDK upload inside a batch file that was loaded
-- reads: loaded_files, loaded_uploads
-- params: $keys VARCHAR[]
-- The keys are joined, not looked up with list_contains: that compares every row with every key,
-- and loaded_uploads holds every upload of the retention (150,000 a day at a large partner's rate).
with given as (
    select distinct unnest($keys::varchar[]) as key
)

select g.key
from given as g
semi join loaded_files as f on f.file_key = g.key
union
select g.key
from given as g
join loaded_uploads as u on u.upload_key = g.key
semi join loaded_files as f on f.file_key = u.batch_key
