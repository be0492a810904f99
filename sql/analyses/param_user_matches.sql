-- grain: one row: whether $user_id has trips in the export (in $app_id when given as '' means
--        any app), and a few user ids that do, for the message
-- reads: trips
-- params: $app_id VARCHAR ('' for every app), $user_id VARCHAR (compared as text: a value that
--         is not a number matches nothing instead of failing the cast)
with users as (
    select user_id, count(*) as trips
    from trips
    where $app_id = '' or app_id = $app_id
    group by user_id
)

select
    count(*) filter (where user_id::varchar = $user_id)::integer as matches,
    (select string_agg(user_id::varchar, ', ' order by trips desc, user_id)
     from (select * from users order by trips desc, user_id limit 3)) as examples
from users
