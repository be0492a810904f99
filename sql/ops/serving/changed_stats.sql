-- Whether the serving pack's statistics section must be rebuilt (see changed_trips.sql).
-- reads: stats_daily, purged_users (the warehouse's)
-- params: $since BIGINT
select
    exists (select 1 from stats_daily where version > $since)
    or exists (select 1 from purged_users where version > $since) as changed
