delete from leases where name = $name and holder = $holder
