// A damaged published file (docs/decisions.md, "API"): a route file cut short or with a flipped
// byte in a block, a serving-pack layer with a changed byte, a slot whose blocks fail their checksums. Read:
// 503 data_unavailable for the requests that need it (never a 500, never the damaged bytes), the
// log names the file, /readyz lists it. Purge: the damaged file is never rewritten and sealed with
// fresh checksums. Load: the file is rebuilt from the warehouse and the answers equal the intact ones.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { pathsFor } from '../../src/data-folder.js';
import { readManifest, slotFile } from '../../src/publish/manifest.js';
import { recordDeletionIn } from '../helpers/deletions.js';
import { readRoute, routeFileIsCurrent, verifyRouteFile } from '../../src/route/route-file.js';
import { sha256File } from '../../src/serving/checksum.js';
import { publishedRows, type Workspace } from '../helpers/workspace.js';
import { filesUnder, overwrite } from '../helpers/files.js';
import { berlinScored, FIXTURE_CLOCK } from '../helpers/fixtures.js';

const clock = FIXTURE_CLOCK;
let ws: Workspace;
let key: string;
let pristine: string;
/** The published trips: org user, platform user, trip. */
let trips: { org: string; user: number; trip: string }[] = [];

type Api = Awaited<ReturnType<typeof createApi>>;

function copyOfData(name: string): string {
  const dir = join(ws.dir, name);
  cpSync(pristine, dir, { recursive: true });
  return dir;
}

/** A route file's index entries (DDSROUT3: a 24-byte footer after the JSON index). */
function indexOf(file: string): [string, string, number, number, number, number][] {
  const bytes = readFileSync(file);
  const length = bytes.readDoubleLE(bytes.length - 24);
  return JSON.parse(bytes.toString('utf8', bytes.length - 24 - length, bytes.length - 24)) as [
    string,
    string,
    number,
    number,
    number,
    number,
  ][];
}

/** A route file of the data folder holding trips of at least two users, the first trip (with points) it lists, and another user with a trip there. */
function routeCase(dir: string): {
  file: string;
  rel: string;
  trip: (typeof trips)[number];
  offset: number;
  bytes: number;
  other: (typeof trips)[number];
} {
  const paths = pathsFor(dir);
  for (const file of filesUnder(paths.routesDir)
    .filter((f) => f.endsWith('.route'))
    .sort()) {
    const entries = indexOf(file).filter((e) => e[3] > 0);
    const first = entries[0];
    if (!first) continue;
    const trip = trips.find((t) => t.trip === first[1])!;
    const other = entries.map((e) => trips.find((t) => t.trip === e[1])!).find((t) => t.user !== trip.user);
    if (other) return { file, rel: relative(paths.publishedDir, file), trip, offset: first[2], bytes: first[4], other };
  }
  throw new Error('no route file with two users');
}

const routeUrl = (t: { org: string; trip: string }) =>
  `/v1/org-user/${encodeURIComponent(t.org)}/trip/${encodeURIComponent(t.trip)}/route`;
const get = (api: Api, url: string) =>
  api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
const readyz = async (api: Api) =>
  (await api.app.inject({ method: 'GET', url: '/readyz' })).json() as Record<string, unknown>;

/** The answers to operations 1-4 and the route of each of `users`' first three trips. */
async function answers(api: Api, users: string[]): Promise<{ url: string; status: number; body: unknown }[]> {
  const urls: string[] = [];
  for (const org of users) {
    const u = encodeURIComponent(org);
    urls.push(
      `/v1/org-user/${u}/trips?limit=100`,
      `/v1/org-user/${u}/statistics?type=week&startTime=2026-11-01&endTime=2026-11-30`,
      `/v1/org-user/${u}/safety-score?interval=30`,
    );
    for (const t of trips.filter((r) => r.org === org).slice(0, 3))
      urls.push(`/v1/org-user/${u}/trip/${encodeURIComponent(t.trip)}`, routeUrl(t));
  }
  const out = [];
  for (const url of urls) {
    const res = await get(api, url);
    const body = res.json() as Record<string, unknown>;
    delete body['requestId'];
    out.push({ url, status: res.statusCode, body });
  }
  return out;
}

/** An API on `dir` whose log lines (stderr) are collected. */
async function apiWithLog(
  dir: string,
  serving: 'pack' | 'sql' = 'pack',
): Promise<{ api: Api; lines: string[]; stop: () => void }> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  const api = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000, serving });
  await api.ctx.snapshots.use((s) => s.extrasChecked);
  return { api, lines, stop: () => spy.mockRestore() };
}

async function intactAnswers(users: string[], serving: 'pack' | 'sql' = 'pack') {
  const api = await createApi({
    dataDir: copyOfData(`intact-${Math.random().toString(36).slice(2)}`),
    now: () => clock,
    pollMs: 60_000,
    serving,
  });
  try {
    await api.ctx.snapshots.use((s) => s.extrasChecked);
    return await answers(api, users);
  } finally {
    await api.close();
  }
}

beforeAll(async () => {
  // 4 users over 6 days, loaded and scored: what is tested here does not depend on the data's seed or size
  ({
    ws,
    built: { key },
  } = await berlinScored());
  trips = (await publishedRows(ws.paths, 'trips', 'org_user_id, trip_id')).map((r) => ({
    org: String(r['org_user_id']),
    user: Number(r['user_id']),
    trip: String(r['trip_id']),
  }));
  pristine = mkdtempSync(join(tmpdir(), 'dds-damage-'));
  cpSync(ws.dir, pristine, { recursive: true });
}, 180_000);
afterAll(() => {
  ws?.cleanup();
  if (pristine) rmSync(pristine, { recursive: true, force: true });
});

describe('a damaged route file', () => {
  it.each([
    ['cut short', (c: ReturnType<typeof routeCase>) => truncateSync(c.file, Math.floor(statSync(c.file).size / 2))],
    [
      'a flipped byte in a block',
      (c: ReturnType<typeof routeCase>) =>
        overwrite(
          c.file,
          c.offset + Math.floor(c.bytes / 2),
          Buffer.from([readFileSync(c.file)[c.offset + Math.floor(c.bytes / 2)]! ^ 0x10]),
        ),
    ],
  ])(
    '%s: 503 data_unavailable, named in the log and on /readyz; a purge never re-seals it; the next load rebuilds it',
    async (what, damage) => {
      const dir = copyOfData(`route-${what.replace(/\W+/g, '-')}`);
      const paths = pathsFor(dir);
      const c = routeCase(dir);
      const users = [...new Set(trips.map((t) => t.org))].filter((o) => o !== c.other.org);
      const intact = await intactAnswers(users);
      const intactRoute = intact.find((a) => a.url === routeUrl(c.trip)) ?? {
        status: 200,
        body: (await intactAnswers([c.trip.org])).find((a) => a.url === routeUrl(c.trip))?.body,
      };
      damage(c);

      const { api, lines, stop } = await apiWithLog(dir);
      try {
        for (let i = 0; i < 3; i++) {
          const res = await get(api, routeUrl(c.trip));
          expect(res.statusCode).toBe(503);
          expect(res.json()).toMatchObject({ code: 50304, error: 'data_unavailable' });
          expect(res.body).not.toContain('/');
        }
        expect(await readyz(api)).toMatchObject({ status: 'ready', reason: 'file_damaged', damaged: [c.rel] });
        expect(lines.filter((l) => l.includes(`${c.rel} is damaged`))).toHaveLength(1);
      } finally {
        stop();
        await api.close();
      }

      // the purge of a user with a trip in that file: the file is not rewritten from its own bytes
      await recordDeletionIn(paths.dataDir, {
        appId: ws.appId,
        platformUserId: c.other.user,
        orgUserId: c.other.org,
        requestedAt: clock.toISOString(),
      });
      const purged = await runLoad({ dataDir: dir, now: clock });
      expect(purged.purged.users).toBe(1);
      // cut short, the file's index cannot be read: the purge's own check refuses it
      expect(purged.purged.routeFilesDamaged).toEqual([c.file]);
      // rebuilt by that load's publish, from the warehouse (without the purged user)
      expect(existsSync(c.file)).toBe(true);
      expect(routeFileIsCurrent(c.file)).toBe(true);
      expect(() => verifyRouteFile(c.file)).not.toThrow();
      expect(readRoute(c.file, ws.appId, c.other.trip)).toBeNull();
      expect(readdirSync(join(paths.publishedDir, 'damaged'))).toEqual([]);

      const after = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000 });
      try {
        await after.ctx.snapshots.use((s) => s.extrasChecked);
        expect((await readyz(after))['damaged']).toBeUndefined();
        const route = await get(after, routeUrl(c.trip));
        expect(route.statusCode).toBe(intactRoute.status);
        expect({ ...(route.json() as object), requestId: undefined }).toEqual({
          ...(intactRoute.body as object),
          requestId: undefined,
        });
        expect(await answers(after, users)).toEqual(intact);
      } finally {
        await after.close();
      }
    },
  );

  it("a flipped byte found only at read time reaches the next load through the API's report, and that load rebuilds the file", async () => {
    const dir = copyOfData('route-report');
    const paths = pathsFor(dir);
    const c = routeCase(dir);
    const intact = await intactAnswers([c.trip.org]);
    const at = c.offset + Math.floor(c.bytes / 3);
    overwrite(c.file, at, Buffer.from([readFileSync(c.file)[at]! ^ 0x01]));
    // the index is intact: only reading the block finds the damage
    expect(routeFileIsCurrent(c.file)).toBe(true);
    const { api, stop } = await apiWithLog(dir);
    try {
      expect((await get(api, routeUrl(c.trip))).statusCode).toBe(503);
    } finally {
      stop();
      await api.close();
    }
    expect(readdirSync(join(paths.publishedDir, 'damaged'))).toHaveLength(1);
    const lines: string[] = [];
    const load = await runLoad({ dataDir: dir, now: clock, progress: (m) => lines.push(m) });
    expect(load.publish.damagedRebuilt).toEqual([c.rel]);
    expect(lines.some((l) => l.includes(`${c.rel} is damaged`))).toBe(true);
    expect(() => verifyRouteFile(c.file)).not.toThrow();
    const after = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000 });
    try {
      await after.ctx.snapshots.use((s) => s.extrasChecked);
      expect(await answers(after, [c.trip.org])).toEqual(intact);
    } finally {
      await after.close();
    }
  });
});

describe('a damaged serving-pack layer', () => {
  it('is listed and served by SQL; a purge never re-seals it; the next load writes its section anew, every file named matching its checksum', async () => {
    const dir = copyOfData('pack-layer');
    const paths = pathsFor(dir);
    const manifest = readManifest(paths.manifestFile)!;
    const name = manifest.pack!.files.trips[0]!;
    const file = join(paths.publishedDir, name);
    const bytes = readFileSync(file);
    const at = bytes.findIndex((b, i) => i > 10 && b >= 0x31 && b <= 0x38);
    overwrite(file, at, Buffer.from([bytes[at]! + 1]));
    const gone = trips[0]!;
    const users = [...new Set(trips.map((t) => t.org))].filter((o) => o !== gone.org);
    const intact = await intactAnswers(users);

    const { api, lines, stop } = await apiWithLog(dir);
    try {
      expect(await readyz(api)).toMatchObject({
        status: 'ready',
        serving: 'sql',
        reason: 'pack_checksum_mismatch',
        damaged: [name],
      });
      expect(lines.some((l) => l.includes(`${name} is damaged`))).toBe(true);
      expect(await answers(api, users)).toEqual(intact);
    } finally {
      stop();
      await api.close();
    }

    await recordDeletionIn(paths.dataDir, {
      appId: ws.appId,
      platformUserId: gone.user,
      orgUserId: gone.org,
      requestedAt: clock.toISOString(),
    });
    const log: string[] = [];
    const purged = await runLoad({ dataDir: dir, now: clock, progress: (m) => log.push(m) });
    expect(purged.purged.users).toBe(1);
    expect(purged.publish.damagedRebuilt).toContain(name);
    expect(log.some((l) => l.includes(`serving file ${name} is damaged`))).toBe(true);
    const next = readManifest(paths.manifestFile)!;
    const named = Object.values(next.pack!.files)
      .flat()
      .flatMap((f) => [f, `${f}.extras`]);
    expect(named).not.toContain(name);
    for (const n of named) expect(sha256File(join(paths.publishedDir, n)), n).toBe(next.pack!.sha256![n]);

    const after = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000 });
    try {
      await after.ctx.snapshots.use((s) => s.extrasChecked);
      const ready = await readyz(after);
      expect(ready).toMatchObject({ status: 'ready', serving: 'pack' });
      expect(ready['reason']).toBeUndefined();
      expect(await answers(after, users)).toEqual(intact);
    } finally {
      await after.close();
    }
  });
});

describe('a damaged slot', () => {
  it('gives 503 data_unavailable (never a 500), named in the log and on /readyz; the next load serves the other slot, rebuilt, and drops the damaged one', async () => {
    const dir = copyOfData('slot');
    const paths = pathsFor(dir);
    const served = readManifest(paths.manifestFile)!;
    const file = slotFile(paths.publishedDir, served.slot);
    const users = [...new Set(trips.map((t) => t.org))];
    const intact = await intactAnswers(users, 'sql');
    // a flipped byte inside every block after the file's three 4 KiB headers (256 KiB blocks)
    for (let at = 3 * 4096 + 100; at < statSync(file).size; at += 256 * 1024)
      overwrite(file, at, Buffer.from([readFileSync(file)[at]! ^ 0x01]));

    const { api, lines, stop } = await apiWithLog(dir, 'sql');
    try {
      const res = await get(api, `/v1/org-user/${encodeURIComponent(users[0]!)}/trips?limit=100`);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: 'data_unavailable' });
      expect((await readyz(api))['damaged']).toEqual([`slot-${served.slot}.duckdb`]);
      expect(lines.some((l) => l.includes(`slot-${served.slot}.duckdb is damaged`))).toBe(true);
    } finally {
      stop();
      await api.close();
    }
    const load = await runLoad({ dataDir: dir, now: clock });
    expect(load.publish).toMatchObject({ published: true, slot: served.slot === 'a' ? 'b' : 'a' });
    expect(load.publish.damagedRebuilt).toContain(`slot-${served.slot}.duckdb`);
    expect(existsSync(file)).toBe(false);
    const after = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000, serving: 'sql' });
    try {
      expect(await answers(after, users)).toEqual(intact);
    } finally {
      await after.close();
    }
  });
});
