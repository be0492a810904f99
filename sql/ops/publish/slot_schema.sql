-- A published slot: what the API reads, read-only. Two slots (a, b) take turns: a publish brings
-- the standby slot up to the warehouse's version in one transaction, then the manifest switches.
-- No indexes: DuckDB uses an ART index only for a bare `user_id = ?` filter, and every API query
-- also filters on app_id and a range, so the indexes served no query; but a COMMIT and CHECKPOINT
-- rewrite them whole, which made each publish cost follow the slot's size instead of the new data.
-- Slots that still have
-- them from an earlier version lose them at the next publish.
create table if not exists meta (key varchar primary key, value varchar not null);

create table if not exists trips (
    app_id varchar not null,
    trip_id varchar not null,
    user_id bigint not null,
    org_user_id varchar not null,
    device_id varchar not null,
    os varchar not null,
    coordinate varchar not null,
    is_auto_start boolean not null,
    is_auto_end boolean not null,
    started_at timestamptz not null,
    ended_at timestamptz not null,
    trip_date date not null,
    start_lat double, start_lng double, end_lat double, end_lng double,
    start_poi varchar, end_poi varchar,
    status varchar not null,
    abnormal_reason varchar not null,
    is_normal boolean not null,
    mileage_m bigint not null,
    duration_s bigint not null,
    avg_speed_kmh double not null,
    max_speed_kmh double not null,
    count_events integer not null,
    score double not null,
    energy_g bigint not null,
    model_version varchar not null,
    version bigint not null
);
drop index if exists trips_user_id;

create table if not exists trip_events (
    app_id varchar not null,
    trip_id varchar not null,
    user_id bigint not null,
    event_index integer not null,
    type varchar not null,
    started_at timestamptz not null,
    ended_at timestamptz not null,
    start_lat double not null, start_lng double not null,
    end_lat double not null, end_lng double not null,
    description varchar not null,
    version bigint not null
);
drop index if exists trip_events_user_id;

create table if not exists stats_daily (
    app_id varchar not null,
    user_id bigint not null,
    stat_date date not null,
    count_trips integer not null,
    mileage_m bigint not null,
    duration_s bigint not null,
    count_events bigint not null,
    max_speed_kmh double not null,
    score_x_mileage double not null,
    score_sum double not null,
    version bigint not null
);
drop index if exists stats_daily_user_id;

create table if not exists safety_scores (
    app_id varchar not null,
    user_id bigint not null,
    org_user_id varchar not null,
    evaluation_date date not null,
    interval_days integer not null,
    evaluated_at timestamptz not null,
    window_start_local timestamp not null,
    window_end_local timestamp not null,
    count_trips integer not null,
    distracted_driving double not null,
    evening_rush_hour double not null,
    acclong_abs_1 double not null,
    weekday_driving double not null,
    low_speed double not null,
    events_per_100km double not null,
    safety_score double not null,
    percentile double,
    multiplier_distracted_driving double,
    multiplier_evening_rush_hour double,
    multiplier_acclong_abs_1 double,
    multiplier_weekday_driving double,
    multiplier_low_speed double,
    multiplier_events double,
    contribution_distracted_driving double,
    contribution_evening_rush_hour double,
    contribution_acclong_abs_1 double,
    contribution_weekday_driving double,
    contribution_low_speed double,
    contribution_events double,
    model_version varchar not null,
    version bigint not null
);
drop index if exists safety_scores_user_id;
-- slots written before scores were explained and ranked gain the columns (the publish that follows
-- the warehouse's backfill fills them: sql/ops/warehouse/score_explain_backfill.sql)
alter table safety_scores add column if not exists percentile double;
alter table safety_scores add column if not exists multiplier_distracted_driving double;
alter table safety_scores add column if not exists multiplier_evening_rush_hour double;
alter table safety_scores add column if not exists multiplier_acclong_abs_1 double;
alter table safety_scores add column if not exists multiplier_weekday_driving double;
alter table safety_scores add column if not exists multiplier_low_speed double;
alter table safety_scores add column if not exists multiplier_events double;
alter table safety_scores add column if not exists contribution_distracted_driving double;
alter table safety_scores add column if not exists contribution_evening_rush_hour double;
alter table safety_scores add column if not exists contribution_acclong_abs_1 double;
alter table safety_scores add column if not exists contribution_weekday_driving double;
alter table safety_scores add column if not exists contribution_low_speed double;
alter table safety_scores add column if not exists contribution_events double;

