select count(*) as n from accounts where deleted_at is null
