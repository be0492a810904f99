-- The statistics written since $since (with changed statistics).
-- params: $since BIGINT

insert into slot.stats_daily by name select * from stats_daily where version > $since;
