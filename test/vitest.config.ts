import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';
import SlowestFirst from './sequencer.js';

// Every test runs with a pinned zone so nothing depends on the machine's TZ.
process.env.TZ = 'UTC';
// An app's default rate limit (1,000 cost units a second) would refuse the suites that ask as fast
// as they can about something else (publish switches, SQL against the serving pack); the tests of
// the limits set their own (test/api/abuse.test.ts).
process.env['DRIVING_API_RATE_PER_APP'] ??= '1000000';
// Load shedding by event-loop delay (503 overloaded past 1 s) answers for the machine, not the
// code: three test workers on two cores, busier still on a shared CI machine, lag a starting
// serve process by that much. Off for the suite; the gates that shed by count are tested with
// their own settings (test/api/route-bounded.test.ts, test/api/abuse.test.ts).
process.env['DRIVING_API_MAX_EVENT_LOOP_DELAY_MS'] ??= '0';
// A serve process stops gracefully: on SIGTERM it waits for its open connections, and a test's
// fetch keeps its connection open for the server's keep-alive hint (5 s, less a second): each stop
// waited seconds for nothing. At 1 s, Node's fetch does not keep a connection past its response,
// so a stop is over in milliseconds (test/README.md).
process.env['DRIVING_API_KEEP_ALIVE_TIMEOUT_MS'] ??= '1000';
// One DuckDB thread a database (jobs run in process and as child processes, which inherit it): the
// workers already keep both cores busy, and a second thread a database cost the suite more CPU
// than it saved (test/README.md).
process.env['DRIVING_DUCKDB_THREADS'] ??= '1';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/**/*.test.ts'],
    // a limit for a test stuck, not for a slow one: on a 2-core machine shared with other runs the
    // process tests (kill, rederive, publish under load) can take minutes
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // three files at a time on two cores: a file's tests wait on child processes, servers, leases
    // and sockets for part of their time, and a third worker fills those waits (a fourth was
    // slower: test/README.md)
    maxWorkers: 3,
    // a worker keeps its modules from one file to the next: loading src/ with DuckDB, Fastify and
    // Arrow costs CPU that a fresh process per file would pay again for every file. No
    // test mocks a module; the few that set an environment variable put it back in a finally.
    isolate: false,
    sequence: { sequencer: SlowestFirst },
    // the run's folder for data folders several files share (helpers/built-folder.ts), removed at the end
    globalSetup: ['test/global-fixtures.ts'],
    // the service's own stderr lines in this process, printed only for a file with a failed test
    setupFiles: ['test/quiet-stderr.ts'],
  },
});
