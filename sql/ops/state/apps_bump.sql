-- an app write: readers that cached the apps see a new version at their next check
update state_versions set version = version + 1 where name = 'apps'
