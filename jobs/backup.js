#!/usr/bin/env node
// Copies what cannot be recomputed into a new folder, with a manifest, while every process keeps
// running (src/jobs/main/backup.ts). Its first line is said before the job's code is read.
import '../dist/src/jobs/starting.js';

const { main } = await import('../dist/src/jobs/main/backup.js');
await main();
