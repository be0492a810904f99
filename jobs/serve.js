#!/usr/bin/env node
// The HTTP API: serves the published snapshot read-only (src/jobs/main/serve.ts). The thread
// pool's size is set before anything uses it.
import '../dist/src/threadpool.js';
import { main } from '../dist/src/jobs/main/serve.js';

await main();
