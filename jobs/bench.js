#!/usr/bin/env node
// The benchmark: makes its own data, runs the real jobs and the API on it, prints a table and
// adds the run to docs/benchmarks.md (bench/main.ts).
import { main } from '../dist/bench/main.js';

// under `npm run bench` the record names that command (npm says so here)
await main({ lifecycleEvent: process.env.npm_lifecycle_event });
