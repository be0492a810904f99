-- Records the route files this publish found intact (see route_checks.sql); one statement, so a
-- job killed here leaves the previous record or this one, never half of it.
insert or replace into meta values ('route_files_checked', $checked)
