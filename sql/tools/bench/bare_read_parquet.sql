-- grain: one row: DuckDB's own read of Parquet trip files, the points unnested and nothing else
-- params: $files VARCHAR[]
-- The baseline the load is held to (with the sorted Parquet write of the points: the load's floor); the sums make
-- DuckDB materialise every value instead of only counting list lengths.
select
    count(*) as points,
    count(p.t) as times,
    sum(p.lat) + sum(p.lng) + sum(p.speed) as checksum
from (
    select unnest(points) as p
    from read_parquet($files::varchar[])
)
