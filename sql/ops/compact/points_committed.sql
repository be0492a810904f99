-- grain: one row per loaded file in the ledger whose key begins with one of $prefixes (the first 16
-- hex digits that name its raw-points files): only a committed file's points are merged, never
-- those of a load in flight, which may still remove them (src/load/file-identity.ts)
-- reads: loaded_files
-- params: $prefixes VARCHAR[]
select left(file_key, 16) as prefix, min(file_key) as file_key, count(*)::int as n
from loaded_files
where left(file_key, 16) in (select unnest($prefixes))
group by left(file_key, 16)
