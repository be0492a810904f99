-- a cell's counts of one app and date, before its new post
delete from cell_score_counts where cell = $cell and app_id = $app_id and evaluation_date = $evaluation_date
