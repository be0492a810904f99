-- The index forgets the purged drivers (their files no longer hold them): their rows of
-- file_drivers and route_file_drivers go. A row whose platformUserId was not a plain integer
-- (user_id null) keeps counting for every driver of its app, without the purged orgUserId.
-- reads: purge_requests
-- params: none
delete from file_drivers as f using purge_requests as p
where f.app_id = p.app_id and f.user_id = p.user_id;

update file_drivers as f set org_user_id = null
from purge_requests as p
where f.app_id = p.app_id and f.user_id is null and f.org_user_id = p.org_user_id;

delete from route_file_drivers as r using purge_requests as p
where r.app_id = p.app_id and r.user_id = p.user_id;
