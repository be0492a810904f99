-- Every user-day of the export's trips: the scope the models read (the warehouse's load narrows
-- it to what changed), so the files in sql/ run on an export unchanged.
create or replace view scope_user_days as select distinct app_id, user_id, trip_date from trips
