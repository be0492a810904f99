-- How many trips one app's section build takes from SQL: it goes in steps of about
-- DRIVING_SERVING_PACK_STEP_ROWS trips' users (src/serving/build.ts). And whether the section has
-- any row of the app written after $since: a delta layer skips the section query of an app
-- without one (most of a small publish's apps).
-- reads: trips, stats_daily, safety_scores
-- params: $app_id VARCHAR, $since BIGINT (-1: every trip), $section VARCHAR (trips, stats or scores)
select
    (select count(*) from trips where app_id = $app_id and version > $since)::double as n,
    case $section
        when 'trips' then exists (select 1 from trips where app_id = $app_id and version > $since)
        when 'stats' then exists (select 1 from stats_daily where app_id = $app_id and version > $since)
        else exists (select 1 from safety_scores where app_id = $app_id and version > $since)
    end as any_rows
