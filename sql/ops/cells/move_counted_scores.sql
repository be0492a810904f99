-- grain: one row per stored score of a moved driver's package that counts in the percentile (a
-- trip in its window): what leaves the source's posted counts for the target's
-- params: $file VARCHAR (the package's safety_scores file)
select evaluation_date::varchar as evaluation_date, interval_days, safety_score
from read_parquet($file)
where count_trips >= 1
order by evaluation_date, interval_days
