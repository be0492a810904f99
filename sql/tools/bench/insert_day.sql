-- Inserts one synthesized day (synth_day_trips) into the warehouse's trips and trip_events.
-- reads: synth_day_trips
-- params: $app_id VARCHAR, $version BIGINT, $batch_id BIGINT, $loaded_at TIMESTAMPTZ,
--         $source_file VARCHAR, $file_key VARCHAR
insert into trips by name
select
    $app_id as app_id,
    * exclude (trip_key, event_types),
    trip_score_model_version() || '+' || energy_model_version() as model_version,
    $source_file as source_file,
    row_number() over (order by started_at, trip_id) as source_line,
    $file_key as file_key,
    $batch_id as batch_id,
    $loaded_at::timestamptz as loaded_at,
    $version as version
from synth_day_trips;

-- one row per event of each trip, numbered from 1 like the load (generate_subscripts), inside the
-- trip, between its start and end positions
insert into trip_events by name
with events as (
    select
        trip_id, user_id, started_at, ended_at, start_lat, start_lng, end_lat, end_lng, trip_key,
        unnest(event_types) as type,
        generate_subscripts(event_types, 1) as event_index
    from synth_day_trips
),

placed as (
    select
        *,
        bench_rnd(trip_key, 'event_at', event_index) as f,
        epoch(ended_at) - epoch(started_at) as trip_seconds
    from events
)

select
    $app_id as app_id,
    trip_id,
    user_id,
    event_index,
    type,
    started_at + to_seconds(floor(f * trip_seconds * 0.9)::integer) as started_at,
    started_at + to_seconds(floor(f * trip_seconds * 0.9)::integer
        + least(bench_event_seconds(type, bench_rnd(trip_key, 'event_len', event_index)), trip_seconds * 0.1)::integer) as ended_at,
    start_lat + f * (end_lat - start_lat) as start_lat,
    start_lng + f * (end_lng - start_lng) as start_lng,
    start_lat + (f + 0.01) * (end_lat - start_lat) as end_lat,
    start_lng + (f + 0.01) * (end_lng - start_lng) as end_lng,
    event_type_description(type) as description,
    $version as version
from placed;
