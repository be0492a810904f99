#!/usr/bin/env node
// The operator's tool for tenants: add an app, list apps, rotate or revoke API keys, rotate the
// AppSecret, set the webhook URL (src/jobs/main/apps.ts).
import { main } from '../dist/src/jobs/main/apps.js';

await main();
