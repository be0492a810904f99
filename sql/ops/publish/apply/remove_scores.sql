-- The slot's copies of the changed scores go (with scores written or removed).
-- params: none (reads changed_scores, sql/ops/publish/apply/scope.sql)

-- as for trips: the slot's copies of the changed scores first (none for a new date), found among
-- the rows of the changed dates only (rows arrive date by date, so zone maps skip the others)
create or replace temp table replaced_scores as
select s.app_id, s.user_id, s.interval_days, s.evaluation_date
from slot.safety_scores as s
semi join changed_scores as c
    on c.app_id = s.app_id and c.user_id = s.user_id and c.interval_days = s.interval_days
    and c.evaluation_date = s.evaluation_date
where s.evaluation_date between (select min(evaluation_date) from changed_scores)
    and (select max(evaluation_date) from changed_scores);

delete from slot.safety_scores as s using replaced_scores as r
where s.app_id = r.app_id and s.user_id = r.user_id and s.interval_days = r.interval_days
    and s.evaluation_date = r.evaluation_date;
