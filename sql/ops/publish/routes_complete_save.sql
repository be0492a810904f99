-- Records the version up to which every trip within retention has its route file (routes_complete.sql).
insert or replace into meta values ('routes_complete_version', $version::varchar)
