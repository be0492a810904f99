-- Brings the attached standby slot from version $since to the warehouse's version $version, part
-- one: what changed since $since (rows carry the version that wrote them), and how much of each.
-- src/publish/apply-to-slot.ts runs only the parts below that have something to do: a score run changes
-- scores only, so its publish runs no statement on trips, statistics or purged users. The removals
-- (remove_*.sql) all come before the insertions (insert_*.sql).
-- Cost follows what changed since $since, not history.
-- params: $since BIGINT

create or replace temp table changed_trips as
select app_id, trip_id from trips where version > $since;

create or replace temp table changed_days as
select app_id, user_id, stat_date from stats_daily where version > $since;

-- the scores a run wrote or removed since $since: a run writes only the rows whose values changed
-- (sql/ops/score/replace_scores.sql), so a date scored again copies its changed users, not the date
create or replace temp table changed_scores as
select app_id, user_id, interval_days, evaluation_date from safety_scores where version > $since
union all
select app_id, user_id, interval_days, evaluation_date from safety_scores_removed where version > $since;

create or replace temp table purged as
select distinct app_id, user_id from purged_users where version > $since;

select
    (select count(*) from changed_trips)::bigint as trips,
    (select count(*) from changed_days)::bigint as days,
    (select count(*) from changed_scores)::bigint as scores,
    (select count(*) from purged)::bigint as purged
