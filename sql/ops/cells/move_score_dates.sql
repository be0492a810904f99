-- The dates a driver has scores of here: the counts the source posts again once it has erased a
-- driver moved away (src/cells/move-leave.ts).
-- grain: one row per evaluation_date
-- params: $app_id, $user_id
select distinct evaluation_date::varchar as d from safety_scores where app_id = $app_id and user_id = $user_id order by 1
