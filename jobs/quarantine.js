#!/usr/bin/env node
// The operator's view of what loads set aside: rejected records and quarantined events
// (src/jobs/main/quarantine.ts).
import { main } from '../dist/src/jobs/main/quarantine.js';

await main();
