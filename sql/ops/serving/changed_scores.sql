-- Whether the serving pack's score section must be rebuilt (see changed_trips.sql): scores written
-- or removed, or users purged, after the served version $since. A date scored again with the same
-- values writes no score (sql/ops/score/replace_scores.sql) and leaves the section as it is.
-- reads: safety_scores, safety_scores_removed, purged_users (the warehouse's)
-- params: $since BIGINT
select
    exists (select 1 from safety_scores where version > $since)
    or exists (select 1 from safety_scores_removed where version > $since)
    or exists (select 1 from purged_users where version > $since) as changed
