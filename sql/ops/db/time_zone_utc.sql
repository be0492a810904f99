-- A connection's session zone: UTC, whatever the machine's. ICU is built in but loads on first
-- use; each new connection sets it once (src/db/open.ts, pool.ts, the load's staging connections).
set TimeZone = 'UTC'
