-- Brings the attached standby slot from version $since to the warehouse's version $version.
-- Cost follows what changed since $since (rows carry the version that wrote them), not history.
-- params: $since BIGINT, $version BIGINT, $now TIMESTAMPTZ

create or replace temp table changed_trips as
select app_id, trip_id from trips where version > $since;

create or replace temp table changed_days as
select app_id, user_id, stat_date from stats_daily where version > $since;

create or replace temp table changed_score_runs as
select distinct app_id, evaluation_date from score_runs where version > $since;

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

delete from slot.safety_scores as s using changed_score_runs as c
where s.app_id = c.app_id and s.evaluation_date = c.evaluation_date;

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

-- The API answers with the newest score not after today. Per user and interval, keep that one and
-- any later (back-filled ahead) ones; older rows can never be the answer again. The cut is taken
-- over the slot's remaining rows and the incoming ones together, before inserting, so rows that
-- would be dropped at once are never written: a first publish of 90 nightly runs for 100,000 users
-- inserted 18 M rows and then deleted 17.8 M of them again in the same transaction, which ran out
-- of memory at the 3 GB limit.
create or replace temp table score_keep_from as
with incoming as (
    select app_id, user_id, interval_days, evaluation_date
    from safety_scores
    where version > $since
),

candidates as (
    select * from incoming
    union all
    select s.app_id, s.user_id, s.interval_days, s.evaluation_date
    from slot.safety_scores as s
    semi join (select distinct app_id, user_id from incoming) as u
        on u.app_id = s.app_id and u.user_id = s.user_id
)

select c.app_id, c.user_id, c.interval_days, max(c.evaluation_date) as keep_from
from candidates as c
join apps as a on a.app_id = c.app_id
where c.evaluation_date <= timezone(a.time_zone, $now::timestamptz)::date
group by all;

delete from slot.safety_scores as s using score_keep_from as k
where s.app_id = k.app_id and s.user_id = k.user_id and s.interval_days = k.interval_days
    and s.evaluation_date < k.keep_from;

insert into slot.safety_scores by name
select
    s.app_id, s.user_id, s.org_user_id, s.evaluation_date, s.interval_days, s.evaluated_at,
    s.window_start_local, s.window_end_local, s.count_trips, s.distracted_driving, s.evening_rush_hour,
    s.acclong_abs_1, s.weekday_driving, s.low_speed, s.events_per_100km, s.safety_score, s.model_version, s.version
from safety_scores as s
left join score_keep_from as k
    on k.app_id = s.app_id and k.user_id = s.user_id and k.interval_days = s.interval_days
where s.version > $since
    and (k.keep_from is null or s.evaluation_date >= k.keep_from);

insert or replace into slot.meta values ('version', $version::varchar);
