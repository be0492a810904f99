-- Records what was just announced of the trips written in (since, version] (the temp table
-- trip_fingerprints): new trips and changed ones with their new fingerprint, unchanged re-sent
-- ones with the version they were last looked at, so the next run starts after them.
-- reads: trip_fingerprints; writes: announced_trips
-- params: $version BIGINT (the published version the events were written for)
delete from announced_trips as a using trip_fingerprints as f
where a.app_id = f.app_id and a.trip_id = f.trip_id;

insert into announced_trips (app_id, trip_id, announced_version, fingerprint, generation)
select app_id, trip_id, $version, fingerprint, generation
from trip_fingerprints;
