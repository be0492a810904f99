-- The other cells' counts of one app and date, as read from the state store (src/cells/rank.ts).
create or replace temp table peer_score_counts (interval_days integer, safety_score double, drivers bigint);
