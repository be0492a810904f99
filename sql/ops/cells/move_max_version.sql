-- grain: one row: the newest version of a moved driver's trips and statistics the source still
-- holds: records of it the source loaded after its package was written (uploads it had taken in
-- before the move) make it newer than the package, and go in a further package
-- params: $app_id, $user_id
select greatest(
    coalesce((select max(version) from trips where app_id = $app_id and user_id = $user_id), 0),
    coalesce((select max(version) from stats_daily where app_id = $app_id and user_id = $user_id), 0)
)::bigint as version
