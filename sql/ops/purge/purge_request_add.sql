-- One user's deletion request, or a driver moved away (requested_at null, moved true).
-- writes: purge_requests (temp)
-- params: $app VARCHAR, $user BIGINT, $org VARCHAR, $at TIMESTAMPTZ (when it was requested), $moved BOOLEAN
insert into purge_requests values ($app, $user, $org, $at, $moved)
