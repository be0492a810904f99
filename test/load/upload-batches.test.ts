import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { createApi } from '../../src/api/http/server.js';
import { pathsFor } from '../../src/data-folder.js';
import { runLoad } from '../../src/jobs/load.js';
import { batchUploads, recoverBatches, uploadFileName, uploadsInTurn } from '../../src/load/uploads.js';
import { landingFiles } from '../../src/load/landing.js';
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

/**
 * The uploads loaded one file each (no batch), as the answer a batched load must give: loaded once,
 * on the first call, for the two tests that compare with it (each upload a file of its own is a load's
 * fixed cost twelve times over). Only read, never changed.
 */
let oneByOne: Promise<{ each: Workspace; one: Awaited<ReturnType<typeof runLoad>> }> | undefined;
const loadedOneByOne = () =>
  (oneByOne ??= (async () => {
    const each = copyOf(ws);
    return { each, one: await runLoad({ dataDir: each.dir, now: clock, uploadBatchBytes: 0 }) };
  })());

const uploads = () =>
  readdirSync(ws.paths.landingDir)
    .filter((n) => /^sdk-.*\.ndjson$/.test(n))
    .sort();
const tripsOf = (w: Workspace) =>
  warehouseRows(
    w.paths,
    `
  select app_id, trip_id, user_id, org_user_id, started_at, ended_at, status, mileage_m, count_points, max_speed_kmh, trip_date
  from trips order by app_id, trip_id`,
  );
const statsOf = (w: Workspace) => warehouseRows(w.paths, 'select * exclude (version) from stats_daily order by all');
const quarantineOf = (w: Workspace) =>
  warehouseRows(w.paths, 'select kind, reason, app_id, trip_id, raw from quarantine order by all');
const none = { known: async () => new Set<string>(), record: async () => undefined, batchLoaded: async () => false };

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  const key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
  const api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 50 });
  try {
    const token = async (user: string) =>
      (
        await api.app.inject({
          method: 'POST',
          url: `/v1/org-user/${user}/token`,
          headers: { authorization: `Bearer ${key}` },
        })
      ).json().token as string;
    const upload = async (tok: string, payload: unknown) => {
      const res = await api.app.inject({
        method: 'POST',
        url: '/v1/sdk/trips',
        headers: { authorization: `Bearer ${tok}` },
        payload: payload as object,
      });
      expect(res.statusCode).toBe(202);
    };
    const tokens = await Promise.all(['u1', 'u2', 'u3'].map(token));
    // one trip an upload, as a phone sends them after each drive; one upload with two trips
    for (let i = 0; i < 9; i++) {
      const day = String(10 + i).padStart(2, '0');
      await upload(
        tokens[i % 3] as string,
        tripRecord({ appId: 'x', tripId: `t-${i}`, start: `2026-11-${day}T17:30:00+01:00`, seconds: 300 + 60 * i }),
      );
    }
    await upload(tokens[0] as string, [
      tripRecord({ appId: 'x', tripId: 't-a', start: '2026-11-19T23:50:00+01:00', seconds: 1200 }),
      tripRecord({ appId: 'x', tripId: 't-b', start: '2026-11-20T07:00:00+01:00', seconds: 200, speed: () => 30 }),
    ]);
    // the phone sends t-0 again, longer: an SDK upload cannot rewrite a trip (trip_immutable), in a
    // batch as between files
    await upload(
      tokens[0] as string,
      tripRecord({ appId: 'x', tripId: 't-0', start: '2026-11-10T17:30:00+01:00', seconds: 900 }),
    );
    // a stale retry of t-0's first upload, byte for byte: skipped as a known file, so left out of a batch
    await upload(
      tokens[0] as string,
      tripRecord({ appId: 'x', tripId: 't-0', start: '2026-11-10T17:30:00+01:00', seconds: 300 }),
    );
    // u3 sends u2's tripId t-1: trip_id_taken, in a batch as in a later file
    await upload(
      tokens[2] as string,
      tripRecord({ appId: 'x', tripId: 't-1', start: '2026-11-11T08:00:00+01:00', seconds: 400 }),
    );
  } finally {
    await api.close();
  }
  expect(uploads()).toHaveLength(13);
});
afterAll(() => {
  for (const c of copies) c.cleanup();
  ws.cleanup();
});

describe('SDK uploads put together by the load', () => {
  it('loads the uploads as one batch file with the same trips, statistics and quarantine as one file per upload', async () => {
    const batched = copyOf(ws);
    const names = uploads();
    // the stale retry (the 12th upload) is left out
    const lines = names
      .filter((_, i) => i !== 11)
      .map((n) => readFileSync(join(ws.paths.landingDir, n), 'utf8'))
      .join('');

    const { each, one } = await loadedOneByOne();
    expect(one.uploadBatches).toMatchObject({ uploads: 0, files: [] });
    expect(one.totals.files).toBe(13);
    expect(one.totals.filesSkipped).toBe(1);
    const two = await runLoad({ dataDir: batched.dir, now: clock });
    expect(two.uploadBatches).toMatchObject({ uploads: 13, duplicates: 1 });
    expect(two.uploadBatches?.files).toHaveLength(1);
    expect(two.totals.files).toBe(1);
    // t-0's longer re-send is refused, within the batch file as from a later file
    expect(one.totals.tripsLoaded).toBe(11);
    expect(one.totals.tripsReplaced).toBe(0);
    expect(two.totals.tripsLoaded).toBe(11);
    expect(one.totals.rejected).toEqual({ trip_id_taken: 1, trip_immutable: 1 });
    expect(two.totals.rejected).toEqual({ trip_id_taken: 1, trip_immutable: 1 });

    expect(await tripsOf(batched)).toEqual(await tripsOf(each));
    expect(await statsOf(batched)).toEqual(await statsOf(each));
    expect(await quarantineOf(batched)).toEqual(await quarantineOf(each));
    const trips = await tripsOf(batched);
    expect(Number(trips.find((t) => t['trip_id'] === 't-0')?.['count_points'])).toBe(301);
    const t1 = await warehouseRows(batched.paths, "select org_user_id from trips where trip_id = 't-1'");
    expect(t1).toEqual([{ org_user_id: 'u2' }]);

    // the batch file is archived like any loaded file, holding the uploads' lines in order
    const archived = readdirSync(join(batched.paths.landingDir, 'loaded', '2026-11-21'));
    expect(archived).toEqual([expect.stringMatching(/^sdk-.*-batch-12-.*\.ndjson$/)]);
    expect(readFileSync(join(batched.paths.landingDir, 'loaded', '2026-11-21', archived[0] as string), 'utf8')).toBe(
      lines,
    );
    // named after its last upload: it sorts where that upload did
    expect((archived[0] as string).slice(0, 28)).toBe((names[12] as string).slice(0, 28));
    expect(readdirSync(batched.paths.landingDir).filter((n) => n !== 'loaded')).toEqual([]);
  });

  it('skips a retry of an upload loaded in a batch on an earlier night, as it skips a known file', async () => {
    const w = copyOf(ws);
    const stale = readFileSync(join(w.paths.landingDir, uploads()[0] as string));
    await runLoad({ dataDir: w.dir, now: clock });
    writeFileSync(join(w.paths.landingDir, uploadFileName(new Date('2026-11-22T07:00:00Z'))), stale);
    const next = await runLoad({ dataDir: w.dir, now: new Date('2026-11-22T09:00:00Z') });
    expect(next.uploadBatches).toMatchObject({ duplicates: 1, files: [] });
    expect(next.totals.files).toBe(0);
    expect(Number((await tripsOf(w)).find((t) => t['trip_id'] === 't-0')?.['count_points'])).toBe(301);
  });

  it('forgets the uploads of a batch file on the day retention removes the file from the landing archive, not before', async () => {
    const w = copyOf(ws);
    await runLoad({ dataDir: w.dir, now: clock });
    const recorded = async () =>
      Number((await warehouseRows(w.paths, 'select count(*) as n from loaded_uploads'))[0]?.['n']);
    const archive = join(w.paths.landingDir, 'loaded', '2026-11-21');
    const kept = await recorded();
    expect(kept).toBeGreaterThan(0);
    // the last day the archive keeps 2026-11-21 (30 days), later in the day than the batch was made
    await runLoad({ dataDir: w.dir, now: new Date('2026-12-21T10:00:00Z') });
    expect(existsSync(archive)).toBe(true);
    expect(await recorded()).toBe(kept);
    await runLoad({ dataDir: w.dir, now: new Date('2026-12-22T01:00:00Z') });
    expect(existsSync(archive)).toBe(false);
    expect(await recorded()).toBe(0);
  });

  it('cuts the uploads into batches of at most the given bytes, in arrival order', async () => {
    const { each } = await loadedOneByOne();
    const batched = copyOf(ws);
    const sizes = uploads().map((n) => readFileSync(join(ws.paths.landingDir, n)).length);
    const limit = (sizes[0] as number) + (sizes[1] as number) + (sizes[2] as number);
    const result = await runLoad({ dataDir: batched.dir, now: clock, uploadBatchBytes: limit });
    const files = result.uploadBatches?.files ?? [];
    expect(files.length).toBeGreaterThanOrEqual(2);
    expect([...files].sort()).toEqual(files);
    for (const f of files)
      expect(
        readFileSync(join(batched.paths.landingDir, 'loaded', '2026-11-21', f.replace(/.*\//, ''))).length,
      ).toBeLessThanOrEqual(limit);
    expect(result.totals.filesFailed).toBe(0);
    // t-0 sent again last still wins over its first upload, now in another batch
    expect(await tripsOf(batched)).toEqual(await tripsOf(each));
  });

  it('never takes a partner file, a link or a file the load would refuse whole into a batch', async () => {
    const w = copyOf(ws);
    const partner = writeNdjson(join(w.paths.landingDir, 'partner-2026-11-20.ndjson'), [
      tripRecord({ appId: w.appId, tripId: 'p-1', start: '2026-11-20T09:00:00+01:00', seconds: 300 }),
    ]);
    writeNdjson(join(w.paths.landingDir, 'sdk-export.ndjson'), [
      tripRecord({ appId: w.appId, tripId: 'p-2', start: '2026-11-20T10:00:00+01:00', seconds: 300 }),
    ]);
    // named as the API names uploads, but not UTF-8: it fails alone, as it would unbatched
    const broken = uploadFileName(new Date('2026-11-21T08:59:00Z'));
    writeFileSync(join(w.paths.landingDir, broken), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
    // and a link with an upload's name: never followed
    const link = uploadFileName(new Date('2026-11-21T08:59:01Z'));
    symlinkSync(w.paths.appsFile, join(w.paths.landingDir, link));
    const result = await runLoad({ dataDir: w.dir, now: clock });
    expect(result.uploadBatches?.uploads).toBe(13);
    const names = result.files.map((f) => f.file.replace(/.*\//, '')).sort();
    expect(names).toHaveLength(4);
    expect(names).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^partner-/),
        broken,
        expect.stringMatching(/-batch-12-/),
        'sdk-export.ndjson',
      ]),
    );
    expect(result.files.find((f) => f.file.endsWith(broken))?.failed).toMatch(/UTF-8/);
    expect(result.refused.map((r) => r.file.replace(/.*\//, ''))).toEqual([link]);
    expect(existsSync(partner)).toBe(false);
    expect(result.totals.tripsLoaded).toBe(13);
    expect(JSON.stringify(await quarantineOf(w))).not.toMatch(/appSecret|ds_/);
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
  const visible = (dir: string) =>
    readdirSync(dir)
      .filter((n) => !n.startsWith('.'))
      .sort();
  const batch = (i: number) => `sdk-2026-11-21T08-00-02-000Z-batch-3-0f0e0d0c-0b0a-4908-8706-05040302010${i}.ndjson`;
  const pendingOf = (dir: string, name: string) => join(dir, '.uploads-batched', name);

  it('is undone when its file was not in place: every upload back, the half-written file removed', async () => {
    const { dir, names } = landing();
    const name = batch(0);
    mkdirSync(pendingOf(dir, name), { recursive: true });
    // the crash came after two uploads were moved aside and while the batch file was written
    for (const n of names.slice(0, 2)) renameSync(join(dir, n), join(pendingOf(dir, name), n));
    writeFileSync(join(dir, `.${name}.tmp`), '{"line":0}\n{"li');
    expect(await recoverBatches(dir, none)).toBeUndefined();
    expect(visible(dir)).toEqual([...names].sort());
    expect(readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('is finished when its file was in place: the uploads it holds are removed', async () => {
    const { dir, names } = landing();
    const name = batch(1);
    mkdirSync(pendingOf(dir, name), { recursive: true });
    for (const n of names) renameSync(join(dir, n), join(pendingOf(dir, name), n));
    writeFileSync(join(dir, name), '{"line":0}\n{"line":1}\n{"line":2}\n');
    await recoverBatches(dir, none);
    expect(visible(dir)).toEqual([name]);
    expect(existsSync(join(dir, '.uploads-batched'))).toBe(false);
  });

  it('is finished when its file was loaded and archived meanwhile: the uploads are not given back', async () => {
    const { dir, names } = landing();
    const name = batch(4);
    mkdirSync(pendingOf(dir, name), { recursive: true });
    for (const n of names) renameSync(join(dir, n), join(pendingOf(dir, name), n));
    await recoverBatches(dir, { batchLoaded: async (n) => n === name });
    expect(visible(dir)).toEqual([]);
  });

  it('drops a batch file no folder waits for, and leaves the API its own files in the making', async () => {
    const { dir, names } = landing();
    const stray = `.${batch(2)}.tmp`;
    writeFileSync(join(dir, stray), 'copy\n');
    const apiTmp = `.${names[0]}.tmp`;
    writeFileSync(join(dir, apiTmp), 'an upload being written\n');
    await recoverBatches(dir, none);
    expect(visible(dir)).toEqual([...names].sort());
    expect(existsSync(join(dir, stray))).toBe(false);
    expect(existsSync(join(dir, apiTmp))).toBe(true);
  });

  it("removes an upload's .tmp file left over an hour ago (an API killed while writing it), and keeps a recent one and anything else", async () => {
    const { dir, names } = landing();
    const hourAgo = (Date.now() - 3_600_000 - 60_000) / 1000;
    const [left, recent, other] = [
      `.${uploadFileName(new Date(Date.UTC(2026, 10, 20)))}.tmp`,
      `.${names[0]}.tmp`,
      '.partner-file.ndjson.tmp',
    ];
    for (const name of [left, recent, other]) writeFileSync(join(dir, name), 'an upload being written\n');
    for (const name of [left, other]) utimesSync(join(dir, name), hourAgo, hourAgo);
    // a link of that name is never followed, and left alone
    const target = join(ws.dir, `target-${Math.random().toString(36).slice(2)}`);
    writeFileSync(target, "not the API's\n");
    const linked = `.${uploadFileName(new Date(Date.UTC(2026, 10, 19)))}.tmp`;
    symlinkSync(target, join(dir, linked));
    const result = await batchUploads(dir, 1 << 20, none);
    expect(result.staleTemps).toBe(1);
    expect(existsSync(join(dir, left))).toBe(false);
    expect(
      readdirSync(dir)
        .filter((n) => n.startsWith('.'))
        .sort(),
    ).toEqual([recent, other, linked].sort());
    expect(existsSync(target)).toBe(true);
    expect(await batchUploads(dir, 1 << 20, none)).toMatchObject({ staleTemps: 0 });
  });

  it('never follows a link put in place of its folder, and then batches nothing', async () => {
    const { dir, names } = landing();
    const elsewhere = join(ws.dir, `elsewhere-${Math.random().toString(36).slice(2)}`);
    mkdirSync(join(elsewhere, batch(3)), { recursive: true });
    writeFileSync(join(elsewhere, batch(3), names[0] as string), "not the load's\n");
    symlinkSync(elsewhere, join(dir, '.uploads-batched'));
    const result = await batchUploads(dir, 1 << 20, none);
    expect(result.error).toMatch(/not the load's own folder/);
    expect(result.files).toEqual([]);
    expect(readdirSync(join(elsewhere, batch(3)))).toEqual([names[0]]);
    expect(visible(dir)).toEqual([...names].sort());
  });

  it('leaves a single upload as it is, and batches nothing at 0 bytes', async () => {
    const { dir, names } = landing();
    expect(await batchUploads(dir, 0, none)).toMatchObject({ uploads: 0, files: [] });
    expect(visible(dir)).toEqual([...names].sort());
    expect(await batchUploads(dir, 1, none)).toMatchObject({ uploads: 0, files: [] });
    // a byte-order mark opens the second file: inside a batch it would open a line
    writeFileSync(
      join(dir, names[1] as string),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"line":1}\n')]),
    );
    const all = await batchUploads(dir, 1 << 20, none);
    expect(all.uploads).toBe(3);
    expect(readFileSync(all.files[0] as string, 'utf8')).toBe('{"line":0}\n{"line":1}\n{"line":2}\n');
    expect(visible(dir)).toEqual([all.files[0]?.replace(/.*\//, '')]);
    expect(readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });
  it('leaves an upload that comes while the others are batched to the next load, and takes every other file', async () => {
    const { dir, names } = landing();
    writeFileSync(join(dir, 'partner-2026-11-20.ndjson'), '{"line":"p"}\n');
    // lands while the batch is made, before the load lists the area
    const late = uploadFileName(new Date(Date.UTC(2026, 10, 21, 8, 0, 1, 500)));
    const arriving = { ...none, record: async () => writeFileSync(join(dir, late), '{"line":"late"}\n') };
    const made = await batchUploads(dir, 1 << 20, arriving);
    expect([...(made.listed ?? [])].sort()).toEqual([...names].sort());
    const listed = landingFiles(dir).files;
    expect(listed.map((f) => f.replace(/.*\//, ''))).toContain(late);
    const { files, later } = uploadsInTurn(listed, made.listed);
    expect(later).toBe(1);
    expect(files.map((f) => f.replace(/.*\//, '')).sort()).toEqual(
      [made.files[0]?.replace(/.*\//, ''), 'partner-2026-11-20.ndjson'].sort(),
    );
    // the next load batches it (alone, it stays a file of its own) and takes it
    const next = await batchUploads(dir, 1 << 20, none);
    expect(uploadsInTurn(landingFiles(dir).files, next.listed).later).toBe(0);
    // with batching off nothing is listed, and nothing is left for later
    expect((await batchUploads(dir, 0, none)).listed).toBeNull();
    expect(uploadsInTurn(listed, null).files).toEqual(listed);
  });
});
