#!/usr/bin/env node
// Restores a backup of backup.js into a new data folder and rebuilds from it
// (src/jobs/main/restore.ts). Its first line is said before the job's code is read.
import '../dist/src/jobs/starting.js';

const { main } = await import('../dist/src/jobs/main/restore.js');
await main();
