import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/server.js';
import { pathsFor } from '../../src/config.js';
import { runLoad } from '../../src/jobs/load.js';
import { batchUploads, recoverBatches, uploadFileName } from '../../src/load/uploads.js';
import { workspace, warehouseRows, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

// The SDK lands each upload as a file of its own; the load puts them together before it lists the
// landing area. The answer must be the one loading every upload as its own file gives.

let ws: Workspace;
const clock = new Date('2026-11-21T09:00:00Z');
const copies: Workspace[] = [];

/** A copy of the uploaded workspace (apps, passport, landing), to load another way. */
function copyOf(from: Workspace): Workspace {
  const dir = `${from.dir}-copy${copies.length}`;
  cpSync(from.dir, dir, { recursive: true });
  const copy = { ...from, dir, paths: pathsFor(dir), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  copies.push(copy);
  return copy;
}

const uploads = () => readdirSync(ws.paths.landingDir).filter((n) => /^sdk-.*\.ndjson$/.test(n)).sort();
const tripsOf = (w: Workspace) => warehouseRows(w.paths, `
  select app_id, trip_id, user_id, org_user_id, started_at, ended_at, status, mileage_m, count_points, max_speed_kmh, trip_date
  from trips order by app_id, trip_id`);
const statsOf = (w: Workspace) => warehouseRows(w.paths, 'select * exclude (version) from stats_daily order by all');

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  const key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  try {
    const token = async (user: string) => (await api.app.inject({ method: 'POST', url: `/v1/org-user/${user}/token`, headers: { authorization: `Bearer ${key}` } })).json().token as string;
    const upload = async (tok: string, payload: unknown) => {
      const res = await api.app.inject({ method: 'POST', url: '/v1/sdk/trips', headers: { authorization: `Bearer ${tok}` }, payload: payload as object });
      expect(res.statusCode).toBe(202);
    };
    const tokens = await Promise.all(['u1', 'u2', 'u3'].map(token));
    // one trip an upload, as a phone sends them after each drive; one upload with two trips
    for (let i = 0; i < 9; i++) {
      const day = String(10 + i).padStart(2, '0');
      await upload(tokens[i % 3] as string, tripRecord({ appId: 'x', tripId: `t-${i}`, start: `2026-11-${day}T17:30:00+01:00`, seconds: 300 + 60 * i }));
    }
    await upload(tokens[0] as string, [
      tripRecord({ appId: 'x', tripId: 't-a', start: '2026-11-19T23:50:00+01:00', seconds: 1200 }),
      tripRecord({ appId: 'x', tripId: 't-b', start: '2026-11-20T07:00:00+01:00', seconds: 200, speed: () => 30 }),
    ]);
    // the phone sends t-0 again, longer: the later upload must win, in a batch as between files
    await upload(tokens[0] as string, tripRecord({ appId: 'x', tripId: 't-0', start: '2026-11-10T17:30:00+01:00', seconds: 900 }));
  } finally {
    await api.close();
  }
  expect(uploads()).toHaveLength(11);
});
afterAll(() => {
  for (const c of copies) c.cleanup();
  ws.cleanup();
});

describe('SDK uploads put together by the load', () => {
  it('loads the uploads as one batch file with the same trips and statistics as one file per upload', async () => {
    const each = copyOf(ws);
    const batched = copyOf(ws);
    const lines = uploads().map((n) => readFileSync(join(ws.paths.landingDir, n), 'utf8')).join('');

    const one = await runLoad({ dataDir: each.dir, now: clock, uploadBatchBytes: 0 });
    expect(one.uploadBatches).toMatchObject({ uploads: 0, files: [] });
    expect(one.totals.files).toBe(11);
    const two = await runLoad({ dataDir: batched.dir, now: clock });
    expect(two.uploadBatches).toMatchObject({ uploads: 11 });
    expect(two.uploadBatches?.files).toHaveLength(1);
    expect(two.totals.files).toBe(1);
    // t-0's first upload is superseded within the batch file, not replaced by a later file
    expect(one.totals.tripsLoaded).toBe(12);
    expect(one.totals.tripsReplaced).toBe(1);
    expect(two.totals.tripsLoaded).toBe(11);

    expect(await tripsOf(batched)).toEqual(await tripsOf(each));
    expect(await statsOf(batched)).toEqual(await statsOf(each));
    const t0 = (await tripsOf(batched)).find((t) => t['trip_id'] === 't-0');
    expect(Number(t0?.['count_points'])).toBe(901);

    // the batch file is archived like any loaded file, holding the uploads' lines in order
    const archived = readdirSync(join(batched.paths.landingDir, 'loaded', '2026-11-21'));
    expect(archived).toEqual([expect.stringMatching(/^sdk-.*-batch-11-.*\.ndjson$/)]);
    expect(readFileSync(join(batched.paths.landingDir, 'loaded', '2026-11-21', archived[0] as string), 'utf8')).toBe(lines);
    expect(readdirSync(batched.paths.landingDir).filter((n) => n !== 'loaded')).toEqual([]);
  });

  it('cuts the uploads into batches of at most the given bytes, in arrival order', async () => {
    const each = copyOf(ws);
    const batched = copyOf(ws);
    await runLoad({ dataDir: each.dir, now: clock, uploadBatchBytes: 0 });
    const sizes = uploads().map((n) => readFileSync(join(ws.paths.landingDir, n)).length);
    const limit = (sizes[0] as number) + (sizes[1] as number) + (sizes[2] as number);
    const result = await runLoad({ dataDir: batched.dir, now: clock, uploadBatchBytes: limit });
    const files = result.uploadBatches?.files ?? [];
    expect(files.length).toBeGreaterThanOrEqual(2);
    expect([...files].sort()).toEqual(files);
    for (const f of files) expect(readFileSync(join(batched.paths.landingDir, 'loaded', '2026-11-21', f.replace(/.*\//, ''))).length).toBeLessThanOrEqual(limit);
    expect(result.totals.filesFailed).toBe(0);
    // t-0 sent again last still wins over its first upload, now in another batch
    expect(await tripsOf(batched)).toEqual(await tripsOf(each));
  });

  it('never takes a partner file, or a name the API does not write, into a batch', async () => {
    const w = copyOf(ws);
    const partner = writeNdjson(join(w.paths.landingDir, 'partner-2026-11-20.ndjson'), [tripRecord({ appId: w.appId, tripId: 'p-1', start: '2026-11-20T09:00:00+01:00', seconds: 300 })]);
    writeNdjson(join(w.paths.landingDir, 'sdk-export.ndjson'), [tripRecord({ appId: w.appId, tripId: 'p-2', start: '2026-11-20T10:00:00+01:00', seconds: 300 })]);
    const result = await runLoad({ dataDir: w.dir, now: clock });
    expect(result.uploadBatches?.uploads).toBe(11);
    const names = result.files.map((f) => f.file.replace(/.*\//, '')).sort();
    expect(names).toEqual([expect.stringMatching(/^partner-/), expect.stringMatching(/-batch-11-/), 'sdk-export.ndjson'].sort());
    expect(existsSync(partner)).toBe(false);
    expect(result.totals.tripsLoaded).toBe(13);
  });
});

describe('a batch a load left halfway', () => {
  const landing = () => {
    const dir = join(ws.dir, `landing-${Math.random().toString(36).slice(2)}`);
    mkdirSync(dir, { recursive: true });
    const names = [0, 1, 2].map((i) => uploadFileName(new Date(Date.UTC(2026, 10, 21, 8, 0, i))));
    names.forEach((n, i) => writeFileSync(join(dir, n), `{"line":${i}}\n`));
    return { dir, names };
  };
  const visible = (dir: string) => readdirSync(dir).filter((n) => !n.startsWith('.')).sort();
  const pendingOf = (dir: string, batch: string) => join(dir, '.uploads-batched', batch);

  it('is finished when its uploads were moved aside: the fsynced batch file goes into place', () => {
    const { dir, names } = landing();
    const batch = 'sdk-2026-11-21T08-00-00-000Z-batch-3-0f0e0d0c-0b0a-4908-8706-050403020100.ndjson';
    writeFileSync(join(dir, `.${batch}.tmp`), names.map((_, i) => `{"line":${i}}\n`).join(''));
    mkdirSync(pendingOf(dir, batch), { recursive: true });
    // the crash came after the first upload was moved: the other two were still in the landing area
    renameSync(join(dir, names[0] as string), join(pendingOf(dir, batch), names[0] as string));
    recoverBatches(dir);
    expect(visible(dir)).toContain(batch);
    expect(existsSync(pendingOf(dir, batch))).toBe(false);
  });

  it('gives the uploads back when its batch file is gone, and drops a batch file no upload was moved for', () => {
    const { dir, names } = landing();
    const batch = 'sdk-2026-11-21T08-00-00-000Z-batch-3-0f0e0d0c-0b0a-4908-8706-050403020101.ndjson';
    mkdirSync(pendingOf(dir, batch), { recursive: true });
    for (const n of names) renameSync(join(dir, n), join(pendingOf(dir, batch), n));
    const stray = '.sdk-2026-11-21T08-00-00-000Z-batch-3-0f0e0d0c-0b0a-4908-8706-050403020102.ndjson.tmp';
    writeFileSync(join(dir, stray), 'copy\n');
    const apiTmp = `.${names[0]}.tmp`;
    writeFileSync(join(dir, apiTmp), 'an upload being written\n');
    recoverBatches(dir);
    expect(visible(dir)).toEqual([...names].sort());
    expect(existsSync(join(dir, stray))).toBe(false);
    // the API's own file in the making is not the load's to remove
    expect(existsSync(join(dir, apiTmp))).toBe(true);
  });

  it('leaves a single upload as it is, and batches nothing at 0 bytes', () => {
    const { dir, names } = landing();
    expect(batchUploads(dir, 0)).toMatchObject({ uploads: 0, files: [] });
    expect(visible(dir)).toEqual([...names].sort());
    const small = batchUploads(dir, 1);
    expect(small).toMatchObject({ uploads: 0, files: [] });
    const all = batchUploads(dir, 1 << 20);
    expect(all.uploads).toBe(3);
    expect(readFileSync(all.files[0] as string, 'utf8')).toBe('{"line":0}\n{"line":1}\n{"line":2}\n');
    expect(visible(dir)).toEqual([all.files[0]?.replace(/.*\//, '')]);
  });
});
