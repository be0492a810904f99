#!/usr/bin/env node
// `npm start`: the whole pipeline on an embedded default, then the API (src/jobs/main/demo.ts).
// The thread pool's size is set before anything uses it.
import '../dist/src/threadpool.js';
import { main } from '../dist/src/jobs/main/demo.js';

// `npm start --port 8081`: npm keeps the --port for itself and says so here (only the demo reads it)
await main({ lifecycleEvent: process.env.npm_lifecycle_event, configPort: process.env.npm_config_port });
