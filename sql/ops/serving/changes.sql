-- What changed after the served version $since, in one statement: whether each section's rows
-- changed (changed_trips.sql, changed_stats.sql, changed_scores.sql go in for trips, stats,
-- scores) and whether scores were removed (removed_scores.sql goes in for removed).
-- grain: one row
-- params: $since BIGINT
select
    (select changed from ({{trips}})) as trips,
    (select changed from ({{stats}})) as stats,
    (select changed from ({{scores}})) as scores,
    (select removed from ({{removed}})) as scores_removed
