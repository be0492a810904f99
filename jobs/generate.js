#!/usr/bin/env node
// Generates realistic, deterministic trip records for an app's users (src/jobs/main/generate.ts).
import { main } from '../dist/src/jobs/main/generate.js';

await main();
