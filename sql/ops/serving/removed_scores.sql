-- Whether a score run removed scores after version $since (sql/ops/score/replace_scores.sql): the
-- serving pack's score section is then written whole, since a delta layer only replaces rows.
-- reads: safety_scores_removed (the warehouse's)
-- params: $since BIGINT
select exists (select 1 from safety_scores_removed where version > $since) as removed
