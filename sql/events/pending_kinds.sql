-- Which kinds of event a publish of $version may have to announce beyond scores: trips written
-- since the last announced trip version (trip.created, trip.updated), users purged since the last
-- user.deleted (user.deleted). A kind with none is skipped, its statements and all.
-- params: $trips_since BIGINT, $users_since BIGINT, $version BIGINT
select
    exists (select 1 from trips where version > $trips_since and version <= $version) as trips,
    exists (select 1 from purged_users where version > $users_since and version <= $version) as users
