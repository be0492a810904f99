-- One row: whether a trip merged after batch $since belongs to another user than a staged,
-- loadable record of the same tripId says (it would now be 'trip_id_taken'), or, for an SDK
-- upload, whether any trip it sends was merged after batch $since.
-- reads: int_trip_records (staged), trips
-- params: $since BIGINT, $sdk BOOLEAN (the file is an SDK upload: any trip merged since counts)
-- Files are derived ahead of their turn to merge; this tells the loader to derive one again.
select exists (
    select 1
    from int_trip_records as r
    join trips as t on t.app_id = r.app_id and t.trip_id = r.trip_id
    where t.batch_id > $since
        and r.reason is null
        -- an SDK file is compared with the stored copy of every trip it sends again (resends.sql)
        and (t.user_id <> try_cast(r.platform_user_id_text as bigint) or $sdk)
) as changed
