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
    // 3 drivers x 2 days (each day is a file the load derives, a fixed half second of CPU each);
    // the trips follow the accounts' random ids, so a driver may have none in two days
    const first = await runDemo({ dataDir: dir, users: 3, days: 2 });
    expect(first.generated).toBe(true);
    expect(first.published.users).toBeGreaterThanOrEqual(1);
    expect(first.published.users).toBeLessThanOrEqual(3);
    expect(first.published.trips).toBe(first.load.totals.tripsLoaded);
    expect(first.published.scores).toBeGreaterThanOrEqual(3);
    expect(first.apiKey).toMatch(/^dk_/);
    // a score as of every day of the history, so the score history has a point a day
    const today = todayIn('Europe/Berlin');
    expect(first.score.runs.map((r) => r.date)).toEqual(
      datesBetween(addDays(first.published.firstDay as string, 1), today),
    );
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
    const child = spawn(
      process.execPath,
      ['jobs/demo.js', '--users', '3', '--days', '2', '--port', '0', '--data-dir', data],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          if (/v1\/openapi\.json"\n/.test(out)) resolve();
        });
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
        const res = await fetch(url, {
          method: line.includes('-X POST') ? 'POST' : 'GET',
          headers: key ? { authorization: `Bearer ${key}` } : {},
        });
        expect(res.status, line).toBe(200);
        // the score history: a point for each day scored since the driver's first trip (the demo
        // scores every day of its history; the trips follow the account's random id)
        if (url.includes('/safety-score/history')) {
          const history = ((await res.json()) as { history: unknown[] }).history;
          const list = await fetch(url.replace(/\/safety-score\/history.*$/, '/trips?limit=100'), {
            headers: { authorization: `Bearer ${key}` },
          });
          const firstTrip = ((await list.json()) as { trips: { startTime: string }[] }).trips
            .map((t) => t.startTime.slice(0, 10))
            .sort()[0] as string;
          expect(history.length, line).toBe(datesBetween(addDays(firstTrip, 1), todayIn('Europe/Berlin')).length);
        }
      }
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(data, { recursive: true, force: true });
    }
  });
});
