-- grain: one row per synthesized user (platform account), fixed traits
-- params: $org_user_ids VARCHAR[], $platform_user_ids BIGINT[], $seed BIGINT, $center_lat DOUBLE,
--         $center_lng DOUBLE
-- Homes and workplaces around the app's city, as the trip generator places them, so the API's
-- coordinates look like real ones.
create or replace temp table synth_users as
with listed as (
    select
        unnest($org_user_ids::varchar[]) as org_user_id,
        unnest($platform_user_ids::bigint[]) as user_id
),

keyed as (
    select *, hash($seed::bigint, user_id, 'bench-user') as user_key
    from listed
),

final as (
    select
        user_id,
        org_user_id,
        user_key,
        case when bench_rnd(user_key, 'os', 0) < 0.55 then 'android' else 'ios' end as os,
        case when bench_rnd(user_key, 'coordinate', 0) < 0.08 then 'GCJ02' else 'WGS84' end as coordinate,
        upper(substr(md5(user_key::varchar || '-device'), 1, 16)) as device_id,
        -- a driver's style moves every factor of every trip the same way, as in the generator
        bench_rnd(user_key, 'style', 0) as style,
        $center_lat::double + 0.12 * (bench_rnd(user_key, 'home_lat', 0) - 0.5) as home_lat,
        $center_lng::double + 0.20 * (bench_rnd(user_key, 'home_lng', 0) - 0.5) as home_lng,
        $center_lat::double + 0.12 * (bench_rnd(user_key, 'work_lat', 0) - 0.5) as work_lat,
        $center_lng::double + 0.20 * (bench_rnd(user_key, 'work_lng', 0) - 0.5) as work_lng
    from keyed
)

select * from final
