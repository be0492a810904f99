#!/usr/bin/env node
// Loads trip files into the warehouse and publishes; with --rederive, derives the loaded files
// again by the current rules (src/jobs/main/load.ts). Its first line is said before the job's code
// is read: Node reads every statically imported module before running any.
import '../dist/src/jobs/starting.js';
// before DuckDB's library is loaded: the watch keeps freed memory between its batches
import '../dist/src/jobs/allocator.js';

const { main } = await import('../dist/src/jobs/main/load.js');
await main();
