-- grain: one row per loadable record (by its line_no): a digest of its delivered points and events
-- reads: int_points (every delivered point, parsed), int_events (every delivered event, parsed)
-- An SDK re-send of a known trip is accepted only when it carries the same values (decisions 3
-- rule 6, trip_immutable): the record's scalar fields are compared with the stored trip's columns,
-- its point and event lists through this digest, which the trip keeps. Values are taken as parsed
-- (a time as an instant, a number as a double), so key order, number formatting and an instant
-- written as ISO text or epoch milliseconds do not change it; the order of the lists does. MD5 of
-- the values in order, not an additive hash: a driver must not be able to pad a changed record
-- with junk points until its digest matches.
with point_digests as (
    select
        line_no,
        md5(string_agg(
            concat(point_index, ',', coalesce(epoch_us(t)::varchar, '~'), ',', coalesce(lat::varchar, '~'), ',',
                   coalesce(lng::varchar, '~'), ',', coalesce(speed::varchar, '~')),
            ';' order by point_index
        )) as points_digest
    from int_points
    group by line_no
),

event_digests as (
    select
        line_no,
        md5(string_agg(
            concat(event_index, ',', coalesce(type, '~'), ',', coalesce(epoch_us(started_at)::varchar, '~'), ',',
                   coalesce(epoch_us(ended_at)::varchar, '~'), ',', coalesce(start_lat::varchar, '~'), ',',
                   coalesce(start_lng::varchar, '~'), ',', coalesce(end_lat::varchar, '~'), ',',
                   coalesce(end_lng::varchar, '~'), ',', coalesce(to_json(description)::varchar, '~')),
            ';' order by event_index
        )) as events_digest
    from int_events
    group by line_no
)

select
    r.line_no,
    md5(concat(coalesce(p.points_digest, ''), '|', coalesce(e.events_digest, ''))) as content_hash
from int_loadable_records as r
left join point_digests as p on p.line_no = r.line_no
left join event_digests as e on e.line_no = r.line_no
