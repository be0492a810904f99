#!/usr/bin/env node
// Export throughput against a data folder's published snapshot (bench/export-main.ts).
import { main } from '../dist/bench/export-main.js';

await main();
