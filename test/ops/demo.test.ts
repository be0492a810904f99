// `npm start` on a small size: creates the demo app once, loads, scores, publishes; a second run
// reuses everything and changes nothing.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDemo } from '../../src/jobs/demo.js';
import { addDays, datesBetween, todayIn } from '../../src/time.js';

const dir = mkdtempSync(join(tmpdir(), 'dds-demo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('demo', () => {
  it('publishes trips and scores for real accounts, and a second run only catches up', async () => {
    // 3 drivers x 2 days: each driver has a trip whatever the weekday (the generator's seed), and
    // each day is a file the load derives (a fixed half second of CPU each), so no more than that
    const first = await runDemo({ dataDir: dir, users: 3, days: 2 });
    expect(first.generated).toBe(true);
    expect(first.published.users).toBe(3);
    expect(first.published.trips).toBe(first.load.totals.tripsLoaded);
    expect(first.published.scores).toBeGreaterThanOrEqual(3);
    expect(first.apiKey).toMatch(/^dk_/);
    // a score as of every day of the history, so the score history has a point a day
    const today = todayIn('Europe/Berlin');
    expect(first.score.runs.map((r) => r.date)).toEqual(datesBetween(addDays(first.published.firstDay as string, 1), today));
    expect(first.score.runs.length).toBe(2);

    const second = await runDemo({ dataDir: dir, users: 3, days: 2 });
    expect(second.generated).toBe(false);
    expect(second.appId).toBe(first.appId);
    expect(second.load.totals.files).toBe(0);
    expect(second.published.trips).toBe(first.published.trips);
    // only the days since the last scored one (today again, on the same day)
    expect(second.score.runs.map((r) => r.date)).toEqual([today]);
  });
});

describe('npm start as a newcomer runs it', () => {
  it('prints calls that work as printed, and the /docs page', async () => {
    const { spawn } = await import('node:child_process');
    const data = mkdtempSync(join(tmpdir(), 'dds-start-'));
    const child = spawn(process.execPath, ['jobs/demo.js', '--users', '3', '--days', '2', '--port', '0', '--data-dir', data], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: string) => { out += chunk; if (/v1\/openapi\.json"\n/.test(out)) resolve(); });
        child.once('exit', (code) => reject(new Error(`demo exited ${code}: ${out}`)));
      });
      const lines = out.split('\n').filter((l) => l.startsWith('  curl ') || l.startsWith('  open '));
      expect(lines.length).toBeGreaterThanOrEqual(8);
      const docs = /open (\S+) in a browser/.exec(out)?.[1] as string;
      const page = await fetch(docs);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
      // every call without a placeholder to fill in answers as printed
      const ready = lines.filter((l) => l.startsWith('  curl ') && !l.includes('<'));
      expect(ready.length).toBeGreaterThanOrEqual(5);
      for (const line of ready) {
        const url = /"(http[^"]+)"$/.exec(line)?.[1] as string;
        const key = /Bearer ([^"]+)"/.exec(line)?.[1];
        const res = await fetch(url, { method: line.includes('-X POST') ? 'POST' : 'GET', headers: key ? { authorization: `Bearer ${key}` } : {} });
        expect(res.status, line).toBe(200);
        // the score history: a point for each of the two days scored
        if (url.includes('/safety-score/history')) expect(((await res.json()) as { history: unknown[] }).history.length, line).toBe(2);
      }
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(data, { recursive: true, force: true });
    }
  });
});
