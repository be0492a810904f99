-- Whether users were purged after warehouse version $since (a slot brought up to date from it is
-- compacted afterwards, so the purged rows' bytes go).
-- grain: one row
-- reads: purged_users
-- params: $since BIGINT
select exists (select 1 from purged_users where version > $since) as any
