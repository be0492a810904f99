-- grain: one row per app and date another cell posted counts of after post $seq
select app_id, evaluation_date, max(seq) as seq
from cell_count_posts
where cell <> $cell and seq > $seq
group by app_id, evaluation_date
order by app_id, evaluation_date
