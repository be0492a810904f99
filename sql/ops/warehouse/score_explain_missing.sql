-- How many scores were stored before contributions, multipliers and percentiles were kept
-- (score_explain_backfill.sql gives them those; none: nothing is written).
-- grain: one row
-- reads: safety_scores
select count(*)::integer as n from safety_scores where multiplier_distracted_driving is null
