-- Helpers for the history synthesizer (temp macros, one connection). No parameters.

-- A pseudo-random number in [0, 1) from a key, a purpose and an index: deterministic at any
-- thread count, unlike random() (same rule as the trip generator's gen_rnd).
create or replace temp macro bench_rnd(k, purpose, i) as
    (hash(k, purpose, i) % 1000003) / 1000003.0;

-- An event type drawn with the frequencies the generator produces (so synthesized history looks
-- like generated input: braking 24 %, speeding 22 %, acceleration 18 %, corners 21 %, phone 6 %, fatigue 2 %, night 1 %).
create or replace temp macro bench_event_type(r) as
    case
        when r < 0.240 then 'brake'
        when r < 0.460 then 'speeding'
        when r < 0.640 then 'throttle'
        when r < 0.745 then 'corner_left'
        when r < 0.850 then 'corner_right'
        when r < 0.933 then 'phone_usage'
        when r < 0.956 then 'phone_call'
        when r < 0.988 then 'tired_driving'
        else 'night_driving'
    end;

-- Seconds an event of that type lasts, about what the generator produces.
create or replace temp macro bench_event_seconds(event_type, r) as
    case event_type
        when 'speeding' then 10 + 40 * r
        when 'phone_usage' then 20 + 90 * r
        when 'phone_call' then 60 + 200 * r
        when 'tired_driving' then 60 + 180 * r
        when 'night_driving' then 300 + 1200 * r
        else 2 + 3 * r
    end;
