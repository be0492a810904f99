#!/usr/bin/env node
// Runs a file from sql/ on a Parquet export: the analysts' way to get the warehouse's numbers
// (src/jobs/main/sql.ts).
import { main } from '../dist/src/jobs/main/sql.js';

await main();
