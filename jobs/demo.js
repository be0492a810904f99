#!/usr/bin/env node
// `npm start`: the whole pipeline on an embedded default, then the API (src/jobs/main/demo.ts).
// The thread pool's size is set before anything uses it.
import '../dist/src/threadpool.js';
import { main } from '../dist/src/jobs/main/demo.js';

await main();
