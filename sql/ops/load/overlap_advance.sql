-- The widened range (overlap_widen.sql) becomes the range the next round widens from.
-- writes: overlap_range (temp), from overlap_range_next
create or replace temp table overlap_range as select * from overlap_range_next
