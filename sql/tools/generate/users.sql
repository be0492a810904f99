-- grain: one row per generated user
-- params: $org_user_ids VARCHAR[], $platform_user_ids BIGINT[], $seed BIGINT, $center_lat DOUBLE, $center_lng DOUBLE
-- Fixed per user: os, coordinate system, device, home and work places, driving style.
create or replace temp table gen_users as
with listed as (
    select
        unnest($org_user_ids::varchar[]) as org_user_id,
        unnest($platform_user_ids::bigint[]) as platform_user_id,
        unnest(range(len($org_user_ids::varchar[]))) as user_idx
),

keyed as (
    select *, hash($seed::bigint, platform_user_id, 'user') as user_key
    from listed
),

placed as (
    select
        *,
        -- homes spread over a disc of 15 km around the centre, denser inside
        15000 * sqrt(gen_rnd(user_key, 'home_r', 0)) as home_r,
        2 * pi() * gen_rnd(user_key, 'home_a', 0) as home_a,
        3000 + 15000 * gen_rnd(user_key, 'work_r', 0) as work_r,
        360 * gen_rnd(user_key, 'work_a', 0) as work_bearing
    from keyed
),

final as (
    select
        user_idx,
        user_key,
        org_user_id,
        platform_user_id,
        case when gen_rnd(user_key, 'os', 0) < 0.55 then 'android' else 'ios' end as os,
        case when gen_rnd(user_key, 'coordinate', 0) < 0.08 then 'GCJ02' else 'WGS84' end as coordinate,
        upper(substr(md5(user_key::varchar || '-device'), 1, 16)) as device_id,
        gen_rnd(user_key, 'style', 0) as style,
        $center_lat::double + home_r * cos(home_a) / gen_m_per_deg() as home_lat,
        $center_lng::double + home_r * sin(home_a) / (gen_m_per_deg() * cos(radians($center_lat::double))) as home_lng,
        work_bearing,
        work_r as work_distance_m
    from placed
)

select
    *,
    home_lat + work_distance_m * cos(radians(work_bearing)) / gen_m_per_deg() as work_lat,
    home_lng + work_distance_m * sin(radians(work_bearing)) / (gen_m_per_deg() * cos(radians(home_lat))) as work_lng
from final
