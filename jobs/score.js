#!/usr/bin/env node
// Computes the 30- and 90-day safety scores as of a date (or a range of dates) and publishes
// (src/jobs/main/score.ts).
import { main } from '../dist/src/jobs/main/score.js';

await main();
