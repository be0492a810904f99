-- The apps the warehouse holds, as src/warehouse/warehouse.ts compares them with the apps file.
-- grain: one row per app, by app_id
select app_id, name, time_zone from apps order by app_id
