-- The evaluation days (days since 1970) scored after version $since, of any app: a served score
-- layer holding one of them was scored again, and the section is written whole (src/serving/format.ts,
-- Footer.days).
-- reads: score_runs (the warehouse's)
-- params: $since BIGINT
select distinct (evaluation_date - date '1970-01-01')::double as day
from score_runs
where version > $since
