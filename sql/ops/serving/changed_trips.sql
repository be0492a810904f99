-- Whether the serving pack's trip section must be rebuilt: trips or events written, or users purged,
-- after the served version $since (rows carry the version that wrote them).
-- reads: trips, trip_events, purged_users (the warehouse's)
-- params: $since BIGINT
select
    exists (select 1 from trips where version > $since)
    or exists (select 1 from trip_events where version > $since)
    or exists (select 1 from purged_users where version > $since) as changed
