#!/usr/bin/env node
// The operator's tool for webhook events: list, show every attempt, replay dead letters, counts
// (src/jobs/main/webhooks.ts).
import { main } from '../dist/src/jobs/main/webhooks.js';

await main();
