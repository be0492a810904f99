-- Whether any user was ever purged (none: the quarantine has nothing to scrub).
-- grain: one row
-- reads: purged_users
select exists (select 1 from purged_users) as any
