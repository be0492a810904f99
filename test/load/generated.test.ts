// The generator's own account of what it wrote (including every kind of bad record) equals what
// the loader reports, for NDJSON and Parquet; and both formats load to the same trips.
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathsFor } from '../../src/data-folder.js';
import { runGenerate } from '../../src/jobs/generate.js';
import { runLoad } from '../../src/jobs/load.js';
import { publishedRows, workspace, type Workspace } from '../helpers/workspace.js';
import { PassportStore } from '../../src/passport/store.js';

const created: Workspace[] = [];
afterAll(() => created.forEach((w) => w.cleanup()));
const now = new Date('2026-11-21T08:00:00Z');

async function generateAndLoad(format: 'ndjson' | 'parquet') {
  const ws = await workspace('Europe/Berlin');
  created.push(ws);
  // 4 users over 2 day files: every kind of bad record comes with the last day whatever the size,
  // and each file a load reads costs a fixed chain
  const generated = await runGenerate({
    dataDir: ws.dir,
    users: 4,
    days: 2,
    seed: 7,
    format,
    badRecords: true,
    endDate: '2026-11-20',
    out: join(ws.dir, 'gen'),
  });
  const loaded = await runLoad({ dataDir: ws.dir, inputs: [join(ws.dir, 'gen')], now });
  return { ws, generated, loaded };
}

describe.each(['ndjson', 'parquet'] as const)('generated %s data', (format) => {
  it('loads with exactly the counts the generator expects', async () => {
    const { generated, loaded } = await generateAndLoad(format);
    const t = loaded.totals;
    const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
    expect(t.rejected).toEqual(generated.badByReason);
    expect(t.pointsDropped).toEqual(generated.droppedPointsByReason);
    expect(t.eventsQuarantined).toEqual(generated.quarantinedEventsByReason);
    expect(t.tripsLoaded).toBe(generated.trips);
    expect(sum(t.tripsAbnormal)).toBe(generated.abnormalTrips);
    expect(t.pointsRead).toBe(generated.points);
    expect(t.pointsKept).toBe(generated.points - sum(generated.droppedPointsByReason));
    expect(t.eventsLoaded).toBe(generated.events - sum(generated.quarantinedEventsByReason));
    expect(Object.keys(t.rejected).length).toBeGreaterThanOrEqual(11);
  });
});

describe('formats and accounts', () => {
  it('gives the same trips from NDJSON and from Parquet, for users who are real accounts', async () => {
    const a = await workspace('Europe/Berlin');
    // a second folder with the same app: a copy of the first's state store (nothing writes it meanwhile)
    const bDir = mkdtempSync(join(tmpdir(), 'dds-test-'));
    cpSync(join(a.dir, 'state'), join(bDir, 'state'), { recursive: true });
    const b: Workspace = {
      dir: bDir,
      paths: pathsFor(bDir),
      appId: a.appId,
      cleanup: () => rmSync(bDir, { recursive: true, force: true }),
    };
    created.push(a, b);
    // 6 users over 2 days (15-18 trips seen: the app's random id is among the generator's inputs, so the count
    // varies by run), more than 5 compared: the size matters less than the files read
    const options = { dataDir: a.dir, users: 6, days: 2, seed: 11, endDate: '2026-11-20' };
    await runGenerate({ ...options, format: 'ndjson', out: join(a.dir, 'gen-ndjson') });
    await runGenerate({ ...options, format: 'parquet', out: join(a.dir, 'gen-parquet') });
    await runLoad({ dataDir: a.dir, inputs: [join(a.dir, 'gen-ndjson')], now });
    await runLoad({ dataDir: b.dir, inputs: [join(a.dir, 'gen-parquet')], now });
    const tripsA = await publishedRows(a.paths, 'trips', 'trip_id');
    expect(tripsA.length).toBeGreaterThan(5);
    expect(await publishedRows(b.paths, 'trips', 'trip_id')).toEqual(tripsA);
    expect(await publishedRows(b.paths, 'trip_events', 'trip_id, event_index')).toEqual(
      await publishedRows(a.paths, 'trip_events', 'trip_id, event_index'),
    );

    const passport = await PassportStore.open(a.paths.passportFile);
    try {
      const users = [...new Set(tripsA.map((t) => String(t['org_user_id'])))];
      const accounts = await passport.ensureAccounts(a.appId, users);
      for (const trip of tripsA) expect(accounts.get(String(trip['org_user_id']))).toBe(Number(trip['user_id']));
    } finally {
      passport.close();
    }
  });
});
