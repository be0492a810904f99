-- Brings the attached standby slot from version $since to the warehouse's version $version.
-- Cost follows what changed since $since (rows carry the version that wrote them), not history.
-- params: $since BIGINT, $version BIGINT

create or replace temp table changed_trips as
select app_id, trip_id from trips where version > $since;

create or replace temp table changed_days as
select app_id, user_id, stat_date from stats_daily where version > $since;

-- the scores a run wrote or removed since $since: a run writes only the rows whose values changed
-- (sql/score/replace_scores.sql), so a date scored again copies its changed users, not the date
create or replace temp table changed_scores as
select app_id, user_id, interval_days, evaluation_date from safety_scores where version > $since
union all
select app_id, user_id, interval_days, evaluation_date from safety_scores_removed where version > $since;

create or replace temp table purged as
select distinct app_id, user_id from purged_users where version > $since;

-- The changed trips the slot already holds: re-sent trips, usually none. The deletes join this
-- table, not changed_trips: a delete joined to a non-empty list scans the whole table, and for
-- trip_events that is every event of the history (84 M rows, 3.8-5.9 s of each publish at the full
-- size), while nearly every changed trip is new. Finding them scans only the slot's trip ids.
create or replace temp table replaced_trips as
select s.app_id, s.trip_id
from slot.trips as s
semi join changed_trips as c on c.app_id = s.app_id and c.trip_id = s.trip_id;

delete from slot.trips as s using replaced_trips as r
where s.app_id = r.app_id and s.trip_id = r.trip_id;

delete from slot.trip_events as s using replaced_trips as r
where s.app_id = r.app_id and s.trip_id = r.trip_id;

delete from slot.stats_daily as s using changed_days as c
where s.app_id = c.app_id and s.user_id = c.user_id and s.stat_date = c.stat_date;

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

delete from slot.trips as s using purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
delete from slot.trip_events as s using purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
delete from slot.stats_daily as s using purged as p where s.app_id = p.app_id and s.user_id = p.user_id;
delete from slot.safety_scores as s using purged as p where s.app_id = p.app_id and s.user_id = p.user_id;

insert into slot.trips by name
select
    app_id, trip_id, user_id, org_user_id, device_id, os, coordinate, is_auto_start, is_auto_end,
    started_at, ended_at, trip_date, start_lat, start_lng, end_lat, end_lng, start_poi, end_poi,
    status, abnormal_reason, is_normal, mileage_m, duration_s, avg_speed_kmh, max_speed_kmh,
    count_events, score, energy_g, model_version, version
from trips
where version > $since;

insert into slot.trip_events by name select * from trip_events where version > $since;

insert into slot.stats_daily by name select * from stats_daily where version > $since;

-- Every score is kept: the history route answers any evaluation date (docs/decisions.md, Statistics and scores).
-- A changed score of a date scored again was deleted above (replaced_scores) and comes back here.
insert into slot.safety_scores by name
select
    app_id, user_id, org_user_id, evaluation_date, interval_days, evaluated_at,
    window_start_local, window_end_local, count_trips, distracted_driving, evening_rush_hour,
    acclong_abs_1, weekday_driving, low_speed, events_per_100km, safety_score, percentile,
    multiplier_distracted_driving, multiplier_evening_rush_hour, multiplier_acclong_abs_1,
    multiplier_weekday_driving, multiplier_low_speed, multiplier_events,
    contribution_distracted_driving, contribution_evening_rush_hour, contribution_acclong_abs_1,
    contribution_weekday_driving, contribution_low_speed, contribution_events,
    model_version, version
from safety_scores
where version > $since;

insert or replace into slot.meta values ('version', $version::varchar);
