-- grain: one row per given file key the warehouse's ledger of loaded files holds
-- reads: loaded_files
-- params: $keys VARCHAR[]
-- The slices of a partner file loaded a slice at a time (src/load/slices.ts) are known by these keys.
with given as (
    select distinct unnest($keys::varchar[]) as key
)

select g.key
from given as g
semi join loaded_files as f on f.file_key = g.key
