#!/usr/bin/env node
// The operator's tool for cells: list them, close or open one to new drivers, move a driver from
// this cell to another (src/jobs/main/cells.ts).
import { main } from '../dist/src/jobs/main/cells.js';

await main();
