#!/usr/bin/env node
// Writes the warehouse as Hive-partitioned Parquet for analysts (src/jobs/main/export.ts).
import { main } from '../dist/src/jobs/main/export.js';

await main();
