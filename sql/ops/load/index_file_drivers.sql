-- The purge's index of a file being merged (src/purge/index.ts): the file, with the archive it is
-- about to be moved to (indexed_files), and the drivers its records name (file_drivers): one row
-- per driver and trip date of the file's trips, and one per driver of records that made no trip
-- (rejected, quarantined: they are still in the archive). A platformUserId that is not a plain
-- integer gives a null user_id, and a line that is not JSON a null app_id: both count for more
-- drivers, never fewer. A file indexed again (a re-derive) adds its rows beside the earlier ones.
-- reads: int_trip_records, int_trips (the file's staging)
-- params: $file_key VARCHAR, $archive_day DATE (null: not archived from landing), $archive_name VARCHAR
insert into indexed_files
select $file_key, $archive_day::date, $archive_name::varchar
where not exists (
    select 1 from indexed_files
    where file_key = $file_key
        and archive_day is not distinct from $archive_day::date
        and archive_name is not distinct from $archive_name::varchar
);

insert into file_drivers
select distinct $file_key, trip_date, app_id, user_id, org_user_id
from (
    select trip_date, app_id, user_id, org_user_id
    from int_trips
    union all
    select
        null::date as trip_date,
        -- JSON that is not an object with a string appId belongs to no app ('')
        case when r.is_json then coalesce(r.app_id, '') end as app_id,
        case
            when regexp_full_match(coalesce(r.platform_user_id_text, ''), '[1-9][0-9]{0,15}')
                then try_cast(r.platform_user_id_text as bigint)
        end as user_id,
        r.org_user_id
    from int_trip_records as r
    -- a record that made a trip is in the index by its trip's row already
    anti join int_trips as t on t.source_line = r.line_no
)
