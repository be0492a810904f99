-- The outbox's schema first on the search path, for a query of the tests and benchmarks that names
-- its tables unqualified (search_path_reset.sql puts it back before the connection is pooled again).
set search_path to webhooks, public
