-- Empties the apps table before the apps file's apps are written again (in one transaction).
-- writes: apps
delete from apps
