-- The warehouse: owned by the batch jobs (one writing process at a time).
-- Every table that is published carries `version`: the warehouse version (meta 'version') of the
-- write that produced the row. A publish copies rows with version > the slot's version.

create table if not exists meta (key varchar primary key, value varchar not null);

create table if not exists apps (
    app_id varchar primary key,
    name varchar not null,
    time_zone varchar not null
);

-- one row per input file ever loaded (content hash): loading the same file twice changes nothing
create table if not exists loaded_files (
    file_key varchar primary key,
    path varchar not null,
    bytes bigint not null,
    batch_id bigint not null,
    loaded_at timestamptz not null
);

-- one row per slice of a large partner file loaded a slice at a time (src/load/slices.ts), by its
-- ledger key (loaded_files.file_key): the file's SHA-256 and name, the slice's byte range and first
-- line, so that a re-derivation cuts the slice again from the archived file
create table if not exists loaded_slices (
    file_key varchar primary key,
    source_key varchar not null,
    source_path varchar not null,
    start_byte bigint not null,
    end_byte bigint not null,
    first_line bigint not null
);

-- the SDK uploads a batch file holds (src/load/uploads.ts), by SHA-256: recorded when the batch is
-- made; an upload counts as loaded once its batch file is in loaded_files, so a byte-identical
-- retry is skipped as a known file would be. Pruned with the landing archive.
create table if not exists loaded_uploads (
    upload_key varchar not null,
    batch_key varchar not null,
    recorded_at timestamptz not null
);

create table if not exists batches (
    batch_id bigint primary key,
    kind varchar not null,
    source varchar,
    version bigint not null,
    started_at timestamptz not null,
    finished_at timestamptz not null,
    report json
);

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
    elapsed_seconds double not null,
    avg_speed_kmh double not null,
    max_speed_kmh double not null,
    count_events integer not null,
    count_points integer not null,
    score double not null,
    energy_g bigint not null,
    driving_seconds double not null,
    low_speed_seconds double not null,
    acc_over_1_seconds double not null,
    distracted_seconds double not null,
    evening_rush_seconds double not null,
    weekday_seconds double not null,
    model_version varchar not null,
    source_file varchar not null,
    source_line bigint not null,
    file_key varchar not null,
    batch_id bigint not null,
    loaded_at timestamptz not null,
    version bigint not null
);

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

create table if not exists quarantine (
    batch_id bigint not null,
    source_file varchar not null,
    line_no bigint not null,
    kind varchar not null,          -- 'record' or 'event'
    reason varchar not null,
    app_id varchar,
    trip_id varchar,
    raw varchar,
    quarantined_at timestamptz not null
);

create table if not exists point_drops (
    batch_id bigint not null,
    reason varchar not null,
    count_points bigint not null
);

-- one row per app, user and local day that has (or had) trips; zero rows are kept so a publish
-- can overwrite a day whose last normal trip went away
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

create table if not exists safety_scores (
    app_id varchar not null,
    user_id bigint not null,
    org_user_id varchar not null,
    evaluation_date date not null,
    interval_days integer not null,
    evaluated_at timestamptz not null,
    window_start timestamptz not null,
    window_end timestamptz not null,
    window_start_local timestamp not null,
    window_end_local timestamp not null,
    count_trips integer not null,
    total_seconds double not null,
    mileage_m bigint not null,
    count_events bigint not null,
    distracted_driving double not null,
    evening_rush_hour double not null,
    acclong_abs_1 double not null,
    weekday_driving double not null,
    low_speed double not null,
    events_per_100km double not null,
    pcf double not null,
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

create table if not exists score_runs (
    app_id varchar not null,
    evaluation_date date not null,
    evaluated_at timestamptz not null,
    count_users integer not null,
    model_version varchar not null,
    version bigint not null
);

-- scores a re-run of their evaluation date no longer gives (the user has no normal trip left in
-- that window): the next publish deletes them from the slot, which copies only the rows a score
-- run changed (sql/ops/score/replace_scores.sql, sql/ops/publish/apply/)
create table if not exists safety_scores_removed (
    app_id varchar not null,
    user_id bigint not null,
    interval_days integer not null,
    evaluation_date date not null,
    version bigint not null
);

create table if not exists purged_users (
    app_id varchar not null,
    user_id bigint not null,
    org_user_id varchar,
    requested_at timestamptz,
    purged_at timestamptz not null,
    version bigint not null
);

-- trips already announced by a trip.created event (once per trip, even when it is re-sent), with
-- the fingerprint of what the API served when last announced (sql/ops/events/trip_fingerprints.sql):
-- a re-sent trip is announced again (trip.updated) only when it differs. Rows written before the
-- fingerprint existed have none (null): their next re-send is announced.
create table if not exists announced_trips (
    app_id varchar not null,
    trip_id varchar not null,
    announced_version bigint not null
);
alter table announced_trips add column if not exists fingerprint varchar;
alter table announced_trips add column if not exists generation integer;

-- the values each user's scores of a date were last announced with (safety_score.updated): a
-- re-run of the date announces the user again only when they differ
create table if not exists announced_scores (
    app_id varchar not null,
    user_id bigint not null,
    evaluation_date date not null,
    fingerprint varchar not null,
    generation integer not null,
    announced_version bigint not null
);

-- the route files a publish found intact and current (or wrote), with each one's size, modification
-- time and inode then (src/publish/route-upkeep.ts), by path relative to published/: a full
-- upkeep reads again only the files not here or changed since; a continuous load's batch adds the
-- files it writes, a row each, instead of rewriting the whole record
create table if not exists route_files_checked (
    path varchar not null,
    identity varchar not null
);

-- the purge's index (src/purge/index.ts), written in each file's merge transaction
-- (sql/ops/load/index_file_drivers.sql), so a committed file is never unindexed. A purge opens only
-- what it names for its drivers, and every file it does not know.
-- indexed_files: one row per loaded file: its key (whose first 16 hex digits name its raw-points
-- files, `warehouse/points/trip_date=<day>/f<16>_*`) and the archive it is moved to after the merge,
-- `landing/loaded/<archive_day>/<archive_name>` (null: not loaded from the landing area).
create table if not exists indexed_files (
    file_key varchar not null,
    archive_day date,
    archive_name varchar
);

-- file_drivers: one row per file, driver and trip date of their trips in it (null for a record that
-- made no trip: rejected or quarantined, still in the archive). `user_id` is null where a record's
-- platformUserId is not a plain integer: such a row counts for every driver of its app (the purge's
-- rule compares orgUserId there, and a value the index does not read the way the purge does must
-- not hide a record); `app_id` null: a line that is not JSON, counted for every driver. A purge
-- deletes its drivers' rows.
create table if not exists file_drivers (
    file_key varchar not null,
    trip_date date,
    app_id varchar,
    user_id bigint,
    org_user_id varchar
);

-- which drivers' trips each route file holds (`published/routes/trip_date=<trip_date>/v<version>.route`):
-- the trips of that version and date when it is written (src/warehouse/route-files.ts), entered before
-- the file is, so a file written is never unindexed. A purge deletes its drivers' rows.
create table if not exists route_file_drivers (
    trip_date date not null,
    version bigint not null,
    app_id varchar not null,
    user_id bigint not null
);

-- route_file_spans: a route file that merges several versions' files of its trip date
-- (src/compact/routes.ts): `published/routes/trip_date=<trip_date>/v<version>.route` holds, for
-- every trip the files of versions first_version..version listed, its newest copy. The publish
-- writes no file of its own for a version such a file covers (src/warehouse/route-files.ts); a file
-- written anew under that name (a damaged one rebuilt) loses its row first.
create table if not exists route_file_spans (
    trip_date date not null,
    first_version bigint not null,
    version bigint not null
);

-- the landing archive's merged day files (src/load/archive-merge.ts, docs/architecture.md, "The
-- landing archive's merged files"): `landing/loaded/<day>/<merged_name>` is a gzip file of one
-- member per archived file, and each row says where one archived file (by its SHA-256 as now held,
-- `file_key`, and its name in the day folder before the merge) is: the member's byte offset and
-- length in the merged file, its lines and its bytes uncompressed. Switched in one transaction with
-- the purge's index (indexed_files) and the ledger, from the merged file's sidecar
-- (`<merged>.members.tsv`).
create table if not exists archive_members (
    file_key varchar not null,
    day date not null,
    name varchar not null,
    merged_name varchar not null,
    member_offset bigint not null,
    member_length bigint not null,
    lines bigint not null,
    bytes bigint not null,
    -- the key the purge's index (indexed_files, file_drivers) knows the member's file by (null: none)
    indexed_key varchar
);

-- members a purge moved out of a merged file (rewritten into a merged file of their own), whose
-- bytes in it are still to be overwritten with zeros (a crash before leaves them here)
create table if not exists archive_holes (
    day date not null,
    name varchar not null,
    member_offset bigint not null,
    member_length bigint not null
);

-- archived files a committed merge replaced, to be removed (a crash before their removal leaves
-- them here, and the next merge of the day removes them first)
create table if not exists archive_garbage (
    day date not null,
    name varchar not null
);

-- points_merged: the merged raw-points files of a trip date (src/compact/points.ts,
-- `warehouse/points/trip_date=<trip_date>/m<n>.parquet`) and the loaded files (`source_key`, the
-- ledger's file_key) whose rows each holds in its `source_key` column. `live` false: a re-derive
-- replaced that file's points since (they are in newer files), so readers skip its rows here; the
-- rows stay until the next merge of the date drops them, and the purge still opens the file for
-- that file's drivers. Entered before the merged file is renamed into place.
create table if not exists points_merged (
    trip_date date not null,
    name varchar not null,
    source_key varchar not null,
    live boolean not null
);

-- points files a committed merge replaced (`source` under the date's folder), to be removed once the
-- merged file `name` is in place; a merge killed before that finishes or undoes it on the next run
create table if not exists points_merge_garbage (
    trip_date date not null,
    name varchar not null,
    source varchar not null
);

-- a purged user's rows that left because the driver moved to another cell (src/cells/move-leave.ts),
-- not because its account was deleted: no user.deleted event, and its later records are not refused
alter table purged_users add column if not exists moved boolean;

-- the moved drivers' packages this warehouse imported (src/cells/move-import.ts), by the package's
-- id: a load stopped after the import and before the arrival was recorded imports nothing again
create table if not exists cell_moves_in (
    move_id varchar primary key,
    app_id varchar not null,
    user_id bigint not null,
    from_cell varchar not null,
    version bigint not null,
    imported_at timestamptz not null
);
