// `npm start` on a small size: creates the demo app once, loads, scores, publishes; a second run
// reuses everything and changes nothing.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDemo } from '../../src/jobs/demo.js';

const dir = mkdtempSync(join(tmpdir(), 'dds-demo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('demo', () => {
  it('publishes trips and scores for real accounts, and a second run only catches up', async () => {
    const first = await runDemo({ dataDir: dir, users: 4, days: 5 });
    expect(first.generated).toBe(true);
    expect(first.published.users).toBe(4);
    expect(first.published.trips).toBe(first.load.totals.tripsLoaded);
    expect(first.published.scores).toBeGreaterThanOrEqual(4);
    expect(first.apiKey).toMatch(/^dk_/);

    const second = await runDemo({ dataDir: dir, users: 4, days: 5 });
    expect(second.generated).toBe(false);
    expect(second.appId).toBe(first.appId);
    expect(second.load.totals.files).toBe(0);
    expect(second.published.trips).toBe(first.published.trips);
  });
});
