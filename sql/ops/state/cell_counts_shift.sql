-- a moved driver's count carried from one cell's post to another's (src/cells/move-counts.ts):
-- $n drivers more (or fewer) of one stored score of one window
update cell_score_counts set drivers = drivers + $n
where cell = $cell and app_id = $app_id and evaluation_date = $evaluation_date
    and interval_days = $interval_days and safety_score = $safety_score
