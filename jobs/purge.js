#!/usr/bin/env node
// Purges the data of deleted accounts, publishes without them and erases them to the bytes
// (src/jobs/main/purge.ts). Its first line is said before the job's code is read.
import '../dist/src/jobs/starting.js';

const { main } = await import('../dist/src/jobs/main/purge.js');
await main();
