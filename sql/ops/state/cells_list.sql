-- grain: one row per registered cell
select name, registered_at, accepting, drivers from cells order by name
