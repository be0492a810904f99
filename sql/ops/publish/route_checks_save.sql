-- Records what a publish found of the route files (route_checks.sql): the paths in $gone are no
-- longer checked (removed, changed or damaged), the $paths are checked with their $identities (a
-- path already recorded gets its new identity). The lists come as JSON arrays of strings (an empty
-- one included). Run in one transaction, so a job killed here leaves the previous record or this
-- one, never half of it.
delete from route_files_checked
where list_contains(from_json($gone, '["VARCHAR"]'), path) or list_contains(from_json($paths, '["VARCHAR"]'), path);
insert into route_files_checked
select unnest(from_json($paths, '["VARCHAR"]')), unnest(from_json($identities, '["VARCHAR"]'));
delete from meta where key = 'route_files_checked';
