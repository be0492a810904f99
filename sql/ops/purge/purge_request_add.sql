-- One user's deletion request.
-- writes: purge_requests (temp)
-- params: $app VARCHAR, $user BIGINT, $org VARCHAR, $at TIMESTAMPTZ (when it was requested)
insert into purge_requests values ($app, $user, $org, $at)
