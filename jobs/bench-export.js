#!/usr/bin/env node
// Export throughput against a data folder's published snapshot (src/jobs/main/bench-export.ts).
import { main } from '../dist/src/jobs/main/bench-export.js';

await main();
