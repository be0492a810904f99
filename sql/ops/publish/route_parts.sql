-- grain: one row per warehouse version and trip date of the trips whose raw points are still kept
-- reads: trips
-- params: $oldest DATE (the oldest trip date whose raw points are kept), $since BIGINT (only versions
--         after it: 0 for all; the version zone maps skip the older history)
-- A trip's route file is named by the trip's date and the version that wrote it, so the API finds
-- it from the served row alone and a re-sent trip (a newer version) never overwrites a served file.
select
    version,
    trip_date::varchar as trip_date,
    list(distinct file_key order by file_key) as file_keys
from trips
where trip_date >= $oldest::date and version > $since
group by version, trip_date
order by version, trip_date
