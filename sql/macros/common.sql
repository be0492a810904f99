-- Helpers used by the models. Loaded into every connection that runs sql/ (jobs and analysts).

-- An instant from ISO 8601 text that carries an offset; a string without one is ambiguous: NULL.
create or replace temp macro parse_iso_instant(s) as
    case
        when regexp_full_match(s, '[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?([zZ]|[+-][0-9]{2}(:?[0-9]{2})?)')
            then try_cast(s as timestamptz)
    end;

-- Epoch milliseconds to an instant; NULL outside years 1970-5000 (NaN, 1e20) instead of an error.
create or replace temp macro epoch_ms_instant(ms) as
    case when isfinite(ms) and ms between 0 and 95617584000000 then to_timestamp(ms / 1000.0) end;

-- A record's time (startTime, endTime), strict: a JSON number is epoch milliseconds, a JSON string
-- must be ISO 8601 with an offset.
create or replace temp macro parse_json_instant(j) as
    case
        when j is null then null
        when json_type(j) in ('BIGINT', 'UBIGINT', 'DOUBLE') then epoch_ms_instant(try_cast(j::varchar as double))
        when json_type(j) = 'VARCHAR' then parse_iso_instant(json_extract_string(j, '$'))
    end;

-- A time inside points and events, lenient (docs/decisions.md): epoch milliseconds as a number or
-- numeric text, or ISO 8601 with an offset. Points are almost always epoch ms: the cheap cast first
-- (a Parquet file's times may be stored as integers; only the rest is read as text).
create or replace temp macro parse_instant(s) as
    coalesce(epoch_ms_instant(try_cast(s as double)), parse_iso_instant(s::varchar));

-- The text of a JSON string value; NULL when the value is absent or not a string.
create or replace temp macro json_string(j) as
    case when j is not null and json_type(j) = 'VARCHAR' then json_extract_string(j, '$') end;

-- A JSON boolean; NULL when absent or not a boolean.
create or replace temp macro json_bool(j) as
    case when j is not null and json_type(j) = 'BOOLEAN' then j::varchar = 'true' end;

-- Great-circle distance in metres (docs/decisions.md, Trip records (load): haversine, R = 6,371,008.8 m).
create or replace temp macro haversine_m(lat1, lng1, lat2, lng2) as
    2 * 6371008.8 * asin(sqrt(
        pow(sin(radians(lat2 - lat1) / 2), 2)
        + cos(radians(lat1)) * cos(radians(lat2)) * pow(sin(radians(lng2 - lng1) / 2), 2)));

-- Seconds from instant `a` to instant `b`, from their integer microseconds: epoch() of an instant
-- with a time zone goes through ICU's calendar (a far costlier step, for every point), and
-- epoch(b) - epoch(a) rounds each side to a double first; this rounds only the difference.
create or replace temp macro seconds_between(a, b) as
    (epoch_us(b) - epoch_us(a)) / 1000000;

-- Whether covering `metres` in `seconds` is faster than 250 km/h, the fastest speed a trip may show
-- (docs/decisions.md, Trip records (load)); NULL when the time difference is not positive (no speed can be measured).
create or replace temp macro faster_than_plausible(metres, seconds) as
    case when seconds > 0 then metres / seconds * 3.6 > 250 end;

-- Whether a point is a position spike (docs/decisions.md, Trip records (load)): reached from its predecessor
-- and left to its successor both faster than 250 km/h. A missing neighbour (NULL) never makes one.
create or replace temp macro is_position_spike(prev_t, prev_lat, prev_lng, t, lat, lng, next_t, next_lat, next_lng) as
    case
        -- a cheap bound first: the degrees moved, summed, times a degree's length on the sphere
        -- (rounded up) is at least the great-circle distance (a path along a meridian and a
        -- parallel is no shorter), so below 250 km/h by that bound the haversine is not needed;
        -- nearly every point is, and its trigonometry would be a large part of int_points' work
        when (abs(lat - prev_lat) + abs(lng - prev_lng)) * 111200 > 69.4 * seconds_between(prev_t, t)
            and (abs(next_lat - lat) + abs(next_lng - lng)) * 111200 > 69.4 * seconds_between(t, next_t)
        then coalesce(
            faster_than_plausible(haversine_m(prev_lat, prev_lng, lat, lng), seconds_between(prev_t, t))
            and faster_than_plausible(haversine_m(lat, lng, next_lat, next_lng), seconds_between(t, next_t)),
            false)
        else false
    end;

-- Seconds two instant ranges [a1, a2) and [b1, b2) share.
create or replace temp macro overlap_seconds(a1, a2, b1, b2) as
    greatest(0, epoch(least(a2, b2)) - epoch(greatest(a1, b1)));

create or replace temp macro share(numerator, denominator) as
    case when coalesce(denominator, 0) = 0 then 0 else numerator / denominator end;

-- The interface's wording of each event type, for events delivered without a description.
create or replace temp macro event_type_description(event_type) as
    case event_type
        when 'brake' then 'Hard braking'
        when 'throttle' then 'Hard acceleration'
        when 'corner_left' then 'Sharp turn, left'
        when 'corner_right' then 'Sharp turn, right'
        when 'speeding' then 'Speeding'
        when 'phone_call' then 'Phone call while driving'
        when 'phone_usage' then 'Phone usage while driving'
        when 'night_driving' then 'Night driving'
        when 'tired_driving' then 'Fatigued driving'
    end;

-- A record's point and event lists as parsed (times as instants): two records sending the same
-- values, whatever their formatting, give equal lists (ops/load/resends.sql).
create or replace temp macro parsed_points(points) as
    list_transform(points, p -> {'t': parse_instant(p.t), 'lat': p.lat::double, 'lng': p.lng::double, 'speed': p.speed::double});

create or replace temp macro parsed_events(events) as
    list_transform(events, e -> {'type': e.type, 'start': parse_instant(e.startTime), 'end': parse_instant(e.endTime),
        'start_lat': e.startPoint.lat, 'start_lng': e.startPoint.lng, 'end_lat': e.endPoint.lat, 'end_lng': e.endPoint.lng,
        'description': e.description});

-- JSON text as JavaScript's JSON.stringify writes it, from the JSON DuckDB writes: the two differ
-- only in the hex digits of a control character's escape (\u001F against \u001f), so the pending
-- events file written here holds the bytes JSON.stringify gave. Every backslash DuckDB writes starts
-- an escape, so splitting into escapes and runs of other characters finds each \uXXXX exactly; only
-- text holding such an escape (an id with a control character) is split at all.
create or replace temp macro js_json(j) as
    case
        when regexp_matches(j, '\\u00[01][A-F]')
            then array_to_string(list_transform(regexp_extract_all(j, '\\u[0-9A-Fa-f]{4}|\\.|[^\\]+'),
                t -> case when starts_with(t, '\u') then lower(t) else t end), '')
        else j
    end;

-- A number as JSON the way JSON.stringify writes it: DuckDB writes a whole double as 85.0, JavaScript
-- as 85. For values like the rounded scores (no exponent: |x| >= 1e-6 or 0, and below 1e15), the
-- two agree otherwise (both give the shortest text that reads back as the same double).
create or replace temp macro js_number(x) as
    (case when x = trunc(x) and abs(x) < 1e15 then (x::bigint)::varchar else x::varchar end)::json;
