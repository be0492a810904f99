-- An older warehouse kept the checked route files as one JSON object (path: identity) in meta;
-- read while the table is empty, and removed by the first save (route_checks_save.sql).
select coalesce(max(value), '{}') as checked from meta where key = 'route_files_checked'
