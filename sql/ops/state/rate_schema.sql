-- Request counts of the rate limits, shared by the API processes of one machine (a file of its
-- own, not the state store: losing it in a crash loses nothing that matters, so it is never fsynced).
create table if not exists rate_counts (
    key text primary key,
    window_start_ms bigint not null,
    count bigint not null
);
