-- The warehouse version up to which every trip within retention has its route file (written by a
-- publish's writeRoutes, src/warehouse/route-files.ts), 0 when none was recorded: a continuous load's
-- batch writes only the route files of versions after it.
select coalesce(max(value::bigint), 0) as version from meta where key = 'routes_complete_version'
