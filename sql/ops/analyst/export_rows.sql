-- An exported table's rows without those of the accounts in export_deleted. The table goes in for
-- table (quoted).
-- grain: one row per row of the table kept
select * from {{table}} as t
where not exists (select 1 from export_deleted as d where d.app_id = t.app_id and d.user_id = t.user_id)
