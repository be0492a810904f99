-- Whether a staged point repeats its record's time: int_points is exact for records without one,
-- and the others are judged again (models/intermediate/int_points_repeated.sql).
-- grain: one row
-- reads: int_points (staged)
select exists (select 1 from int_points where drop_reason = 'duplicate_time') as any
