-- Whether the serving pack's score section must be rebuilt (see changed_trips.sql). A score run
-- that replaced a date with no users changes score_runs only.
-- reads: safety_scores, score_runs, purged_users (the warehouse's)
-- params: $since BIGINT
select
    exists (select 1 from safety_scores where version > $since)
    or exists (select 1 from score_runs where version > $since)
    or exists (select 1 from purged_users where version > $since) as changed
