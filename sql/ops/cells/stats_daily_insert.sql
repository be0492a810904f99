-- The moved driver's statistics computed again from the trips held (sql/models/marts/stats_daily.sql).
-- In: stats (that model's text). params: $version (and the model's own)
insert into stats_daily by name
{{stats}}
