-- The route files the last publish found intact and current, with each one's size, modification
-- time and inode then (JSON, by path relative to published/): src/publish/route-upkeep.ts reads
-- again only the files written since. Empty before the first publish.
select coalesce(max(value), '{}') as checked from meta where key = 'route_files_checked'
