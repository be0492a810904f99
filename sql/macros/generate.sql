-- Helpers for the trip generator (temp macros, one connection). No parameters.

-- A pseudo-random number in [0, 1) from a key, a purpose and an index: deterministic at any
-- thread count, unlike random().
create or replace temp macro gen_rnd(k, purpose, i) as
    (hash(k, purpose, i) % 1000003) / 1000003.0;

-- '+01:00' for an offset in seconds.
create or replace temp macro gen_offset_text(sec) as
    (case when sec < 0 then '-' else '+' end)
    || lpad((abs(sec) // 3600)::varchar, 2, '0') || ':'
    || lpad(((abs(sec) % 3600) // 60)::varchar, 2, '0');

-- Local wall-clock time of epoch milliseconds in a zone.
create or replace temp macro gen_local(ms, tz) as
    timezone(tz, to_timestamp(ms // 1000));

-- ISO 8601 with the zone's offset at that instant, to the second: 'YYYY-MM-DDTHH:MM:SS+01:00'.
create or replace temp macro gen_iso(ms, tz) as
    strftime(gen_local(ms, tz), '%Y-%m-%dT%H:%M:%S')
    || gen_offset_text((epoch_ms(gen_local(ms, tz)) - (ms // 1000) * 1000) // 1000);

-- Epoch milliseconds of a local wall-clock time in a zone.
create or replace temp macro gen_epoch_ms(local_ts, tz) as
    epoch_ms(timezone(tz, local_ts));

-- Metres per degree of latitude (and of longitude at the equator).
create or replace temp macro gen_m_per_deg() as 111320.0;
