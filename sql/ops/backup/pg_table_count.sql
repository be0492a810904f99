-- Tables already in the database a restore is asked to fill (it must be empty).
select count(*)::int as n from information_schema.tables where table_schema = current_schema();
