-- grain: one row: the apps' change counter (raised by every app write)
select version from state_versions where name = 'apps'
