-- grain: one row per loadable record (by its line_no): a digest of its delivered points and events
-- reads: int_points (every delivered point, parsed), int_events (every delivered event, parsed), meta
-- An SDK re-send of a known trip is accepted only when it carries the same values (docs/decisions.md, Trip records (load)
-- rule 6, trip_immutable): the record's scalar fields are compared with the stored trip's columns,
-- its point and event lists through this digest, which the trip keeps. Values are taken as parsed
-- (a time as an instant, a number as a double), so key order, number formatting and an instant
-- written as ISO text or epoch milliseconds do not change it; a value's place in its list does.
-- Each element's hash starts from the warehouse's secret salt (meta 'content_salt', never
-- published): without it a driver cannot compute element hashes, so cannot pad a changed record
-- with junk points until the XOR matches. An XOR streams; MD5 over the ordered values needs
-- each record's values gathered in order into one text first, a large share of the load's work.
with salt as (
    select hash(value) as salt from meta where key = 'content_salt'
),

point_digests as (
    select line_no, bit_xor(hash((select salt from salt), point_index, t, lat, lng, speed)) as points_digest
    from int_points
    group by line_no
),

event_digests as (
    select
        line_no,
        bit_xor(hash((select salt from salt), event_index, type, started_at, ended_at, start_lat, start_lng, end_lat, end_lng, description))
            as events_digest
    from int_events
    group by line_no
)

select
    r.line_no,
    hash((select salt from salt), coalesce(p.points_digest, 0), coalesce(e.events_digest, 0))::varchar as content_hash
from int_loadable_records as r
left join point_digests as p on p.line_no = r.line_no
left join event_digests as e on e.line_no = r.line_no
