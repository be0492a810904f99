-- Brings a warehouse written before scores were explained and ranked to the current columns: the
-- contributions, multipliers and percentile join (nullable: older rows are filled by
-- score_explain_backfill.sql), and the proportional `lost_*` shares they replace go.
alter table safety_scores add column if not exists percentile double;
alter table safety_scores add column if not exists multiplier_distracted_driving double;
alter table safety_scores add column if not exists multiplier_evening_rush_hour double;
alter table safety_scores add column if not exists multiplier_acclong_abs_1 double;
alter table safety_scores add column if not exists multiplier_weekday_driving double;
alter table safety_scores add column if not exists multiplier_low_speed double;
alter table safety_scores add column if not exists multiplier_events double;
alter table safety_scores add column if not exists contribution_distracted_driving double;
alter table safety_scores add column if not exists contribution_evening_rush_hour double;
alter table safety_scores add column if not exists contribution_acclong_abs_1 double;
alter table safety_scores add column if not exists contribution_weekday_driving double;
alter table safety_scores add column if not exists contribution_low_speed double;
alter table safety_scores add column if not exists contribution_events double;
alter table safety_scores drop column if exists lost_distracted_driving;
alter table safety_scores drop column if exists lost_evening_rush_hour;
alter table safety_scores drop column if exists lost_acclong_abs_1;
alter table safety_scores drop column if exists lost_weekday_driving;
alter table safety_scores drop column if exists lost_low_speed;
alter table safety_scores drop column if exists lost_events;
