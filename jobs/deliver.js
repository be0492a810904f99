#!/usr/bin/env node
// The webhook deliverer: owns the outbox, delivers the jobs' events signed, retries, dead-letters
// (src/jobs/main/deliver.ts). The thread pool's size is set before anything uses it.
import '../dist/src/threadpool.js';
import { main } from '../dist/src/jobs/main/deliver.js';

await main();
