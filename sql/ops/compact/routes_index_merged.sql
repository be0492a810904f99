-- The purge's index and the publish's span of a merged route file, entered before the file is
-- renamed into place (src/compact/routes.ts): its drivers are those the index names for its
-- sources, and the drivers of the trips it holds (a source the index did not know), so the file
-- is never known for fewer drivers than it holds; its span says which versions' files it stands for.
-- reads: route_file_drivers, trips
-- writes: route_file_drivers, route_file_spans
-- params: $trip_date DATE, $version BIGINT (the merged file's, the newest source's),
--         $first_version BIGINT (the oldest version its sources stand for: a source that is a merged
--         file, left by a merge killed before it removed every source, brings its span),
--         $versions BIGINT[] (the sources'),
--         $app_ids VARCHAR[], $trip_ids VARCHAR[] (the trips it holds, side by side)
insert into route_file_drivers
select distinct $trip_date::date, $version::bigint, d.app_id, d.user_id
from (
    select r.app_id, r.user_id
    from route_file_drivers as r
    where r.trip_date = $trip_date::date and r.version in (select unnest($versions)::bigint)
    union all
    select t.app_id, t.user_id
    from trips as t
    semi join (select unnest($app_ids) as app_id, unnest($trip_ids) as trip_id) as m
        on m.app_id = t.app_id and m.trip_id = t.trip_id
) as d
where not exists (
    select 1 from route_file_drivers as r
    where r.trip_date = $trip_date::date and r.version = $version and r.app_id = d.app_id and r.user_id = d.user_id
);

delete from route_file_spans where trip_date = $trip_date::date and version = $version;

insert into route_file_spans values ($trip_date::date, $first_version, $version);
