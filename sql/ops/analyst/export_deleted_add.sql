-- One account deleted but not yet purged.
-- writes: export_deleted (temp)
-- params: $app VARCHAR, $user BIGINT
insert into export_deleted values ($app, $user)
