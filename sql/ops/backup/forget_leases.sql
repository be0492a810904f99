-- A restored state store: the leases of the backup's machine are forgotten (their holders are not here).
delete from leases;
