#!/usr/bin/env node
// The benchmark: makes its own data, runs the real jobs and the API on it, prints a table and
// adds the run to docs/benchmarks.md (src/jobs/main/bench.ts).
import { main } from '../dist/src/jobs/main/bench.js';

// under `npm run bench` the record names that command (npm says so here)
await main({ lifecycleEvent: process.env.npm_lifecycle_event });
