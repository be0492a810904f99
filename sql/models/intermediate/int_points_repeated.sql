-- Judges again the points of the records that have a repeated time (int_points.sql assumes none):
-- the repeats are dropped first, then each point left is judged against its neighbours among the
-- points left, and the record's rows in int_points are replaced. Usually there are none.
-- reads/writes: int_points

create or replace temp table repeated_lines as
select distinct line_no from int_points where drop_reason = 'duplicate_time';

create or replace temp table repeated_points as
with checked as (
    select
        line_no, point_index, t, lat, lng, speed,
        case when drop_reason not in ('duplicate_time', 'position_spike') then drop_reason end as value_reason
    from int_points
    semi join repeated_lines using (line_no)
),

-- the valid points first, by time then delivery: a repeated time follows its first delivery
repeats as (
    select
        *,
        coalesce(value_reason, case when lag(t) over w = t then 'duplicate_time' end) as left_reason
    from checked
    window w as (partition by line_no order by value_reason is not null, t, point_index)
),

-- the points left first, by time: the row after a point left is its successor only while that is
-- a point left too
neighbours as (
    select
        *,
        lag(t) over w as prev_t,
        lag(lat) over w as prev_lat,
        lag(lng) over w as prev_lng,
        case when lead(left_reason) over w is null then lead(t) over w end as next_t,
        lead(lat) over w as next_lat,
        lead(lng) over w as next_lng,
        lead(speed) over w as next_speed
    from repeats
    window w as (partition by line_no order by left_reason is not null, t)
)

select
    line_no,
    point_index,
    t,
    lat,
    lng,
    speed,
    coalesce(left_reason, case when is_position_spike(prev_t, prev_lat, prev_lng, t, lat, lng, next_t, next_lat, next_lng) then 'position_spike' end) as drop_reason,
    case when left_reason is null then next_t end as next_t,
    case when left_reason is null and next_t is not null then next_lat end as next_lat,
    case when left_reason is null and next_t is not null then next_lng end as next_lng,
    case when left_reason is null and next_t is not null then next_speed end as next_speed
from neighbours;

delete from int_points as p using repeated_lines as r where p.line_no = r.line_no;

insert into int_points by name select * from repeated_points;

drop table repeated_points;

drop table repeated_lines
