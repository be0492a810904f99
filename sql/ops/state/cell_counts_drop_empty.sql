-- a cell's counts of one app and date left with no driver by a move
delete from cell_score_counts where cell = $cell and app_id = $app_id and evaluation_date = $evaluation_date and drivers <= 0
