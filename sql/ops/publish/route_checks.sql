-- The route files found intact and current (schema.sql, route_files_checked), with each one's
-- identity then: src/publish/route-upkeep.ts reads again only the files written or changed since.
select path, identity from route_files_checked
