-- grain: one row per parsed record of one input file
-- reads: stg_trip_records, apps, trips and purged_users (the warehouse's)
-- params: $validated_at TIMESTAMPTZ (the load's clock: a record time more than 10 minutes after it
--         is out of range, docs/decisions.md, Trip records (load)), $sdk_upload BOOLEAN (an SDK upload file)
-- Decides, per record, the first quarantine reason (docs/decisions.md, Trip records (load)), or none.
-- Within one file the last line of a tripId wins (the first, in an SDK upload file); the others
-- are marked superseded_in_file. The
-- first loadable line of a tripId new to the warehouse decides its owner (trip_id_taken below).
-- owner_id and owner_trip_date describe the warehouse's copy of the trip when the file was staged.
-- The point and event lists stay in stg_trip_records (int_points and int_events read them there by
-- line_no): copying them through every model cost as much as deriving from them.
with fields as (
    select
        line_no,
        is_json,
        is_object,
        json_string(app_id_json) as app_id,
        platform_user_id_json::varchar as platform_user_id_text,
        json_string(org_user_id_json) as org_user_id,
        json_string(trip_id_json) as trip_id,
        coalesce(json_string(device_id_json), '') as device_id,
        json_string(os_json) as os,
        case when coordinate_json is null or coordinate_json::varchar = 'null' then 'WGS84'
             else json_string(coordinate_json) end as coordinate,
        coalesce(json_bool(is_auto_start_json), false) as is_auto_start,
        coalesce(json_bool(is_auto_end_json), false) as is_auto_end,
        parse_json_instant(start_time_json) as started_at,
        parse_json_instant(end_time_json) as ended_at,
        json_string(start_poi_json) as start_poi,
        json_string(end_poi_json) as end_poi
    from stg_trip_records
),

reasons as (
    select
        f.*,
        case
            when not is_json then 'invalid_json'
            when not is_object then 'not_an_object'
            when f.app_id is null or f.app_id = '' then 'missing_app_id'
            when a.app_id is null then 'unknown_app'
            when not coalesce(regexp_full_match(platform_user_id_text, '[1-9][0-9]{0,15}'), false)
                or platform_user_id_text::hugeint >= 9007199254740992 then 'invalid_platform_user_id'
            when org_user_id is null or org_user_id = '' then 'missing_org_user_id'
            when f.trip_id is null or f.trip_id = '' then 'missing_trip_id'
            when length(f.trip_id) > 128 then 'invalid_trip_id'
            when os is null or os not in ('android', 'ios') then 'invalid_os'
            when coordinate is null or coordinate not in ('WGS84', 'GCJ02') then 'invalid_coordinate'
            when started_at is null then 'invalid_start_time'
            when ended_at is null then 'invalid_end_time'
            -- before 2000 or in the future (10 minutes allow for a phone clock running ahead)
            when least(started_at, ended_at) < timestamptz '2000-01-01 00:00:00+00'
                or greatest(started_at, ended_at) > $validated_at::timestamptz + interval 10 minute then 'time_out_of_range'
            -- a tripId is unique within the app: one user cannot replace another user's trip
            when owner.owner_id is not null and owner.owner_id <> try_cast(platform_user_id_text as bigint) then 'trip_id_taken'
            -- the account was deleted and its data purged: late uploads must not bring it back
            when gone.gone_id is not null then 'user_deleted'
        end as reason,
        a.time_zone,
        -- the warehouse's copy of the trip, if any: merge_file.sql replaces it without looking again
        owner.owner_id,
        owner.owner_trip_date
    from fields as f
    left join apps as a on a.app_id = f.app_id
    left join (select app_id, trip_id, user_id as owner_id, trip_date as owner_trip_date from trips) as owner
        on owner.app_id = f.app_id and owner.trip_id = f.trip_id
    left join (select distinct app_id, user_id as gone_id from purged_users where not coalesce(moved, false)) as gone
        on gone.app_id = f.app_id and gone.gone_id = try_cast(f.platform_user_id_text as bigint)
),

-- A tripId the warehouse does not have belongs to the user of its first loadable line in the file:
-- a later line of another user is trip_id_taken, as it would be in a later file (an SDK batch
-- file holds many users' uploads). A user_deleted line after it is trip_id_taken too, the reason
-- that comes first; before it, it stays user_deleted, as in an earlier file.
first_owners as (
    select app_id, trip_id, min(line_no) as first_line, arg_min(try_cast(platform_user_id_text as bigint), line_no) as first_user
    from reasons
    where reason is null
    group by app_id, trip_id
),

owned as (
    select
        r.* replace (
            case
                when r.owner_id is null and (r.reason is null or r.reason = 'user_deleted')
                    and o.first_line < r.line_no and o.first_user <> try_cast(r.platform_user_id_text as bigint)
                then 'trip_id_taken'
                else r.reason
            end as reason
        )
    from reasons as r
    left join first_owners as o on o.app_id = r.app_id and o.trip_id = r.trip_id
),

final as (
    select
        *,
        reason is null
            -- an SDK upload cannot rewrite a trip (docs/decisions.md, Trip records (load), SDK re-sends): there the first line wins,
            -- and ops/load/resends.sql judges the later ones
            and row_number() over (partition by reason is null, app_id, trip_id
                                   order by case when $sdk_upload then line_no else -line_no end) > 1
            as superseded_in_file,
        -- an SDK re-send equal to the stored trip (ops/load/resends.sql): accepted, changes nothing
        false as is_unchanged
    from owned
)

select * from final
