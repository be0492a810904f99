// Stored data the API can trust: serving pack files whose bytes changed are refused (SQL serves
// instead, with the same answers), a pack read that fails at request time falls back to SQL, a
// corrupt standby slot is rebuilt by the next publish, a removed manifest neither stops the API
// nor the next publish, and /readyz tells an unauthenticated caller nothing internal.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { slotFile } from '../../src/publish/manifest.js';
import { manifestOf, publishedRows, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { overwrite } from '../helpers/files.js';
import { berlinScored, FIXTURE_CLOCK } from '../helpers/fixtures.js';
import { builtFolder, removeBuiltFolders } from '../helpers/built-folder.js';

const ROOT = join(import.meta.dirname, '..', '..');
const clock = FIXTURE_CLOCK;
let ws: Workspace;
let key: string;
/** The published data as written, before any test damages it (copied to its own folder). */
let pristine: string;
const urls: string[] = [];

/** A copy of the pristine data folder for one test to damage. */
function copyOfData(name: string): string {
  const dir = join(ws.dir, name);
  cpSync(pristine, dir, { recursive: true });
  return dir;
}

type Api = Awaited<ReturnType<typeof createApi>>;
async function answers(api: Api): Promise<{ url: string; status: number; body: unknown }[]> {
  const out = [];
  for (const url of urls) {
    const res = await api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    const body = res.json() as Record<string, unknown>;
    delete body['requestId'];
    out.push({ url, status: res.statusCode, body });
  }
  return out;
}
const readyz = async (api: Api) =>
  (await api.app.inject({ method: 'GET', url: '/readyz' })).json() as Record<string, unknown>;
const packFile = (dir: string, section: 'trips' | 'stats' | 'scores') => {
  const m = JSON.parse(readFileSync(join(dir, 'published', 'manifest.json'), 'utf8')) as {
    pack: { files: Record<string, string[]> };
  };
  return join(dir, 'published', m.pack.files[section]![0]!);
};

beforeAll(async () => {
  // 4 users over 6 days, loaded and scored: what is tested here does not depend on the data's seed or size
  ({
    ws,
    built: { key },
  } = await berlinScored());
  const trips = await publishedRows(ws.paths, 'trips', 'org_user_id, trip_id');
  const users = [...new Set(trips.map((t) => String(t['org_user_id'])))];
  for (const user of users) {
    const u = encodeURIComponent(user);
    urls.push(
      `/v1/org-user/${u}/trips?limit=100`,
      `/v1/org-user/${u}/statistics?type=week&startTime=2026-11-01&endTime=2026-11-30`,
    );
    urls.push(`/v1/org-user/${u}/safety-score?interval=30`, `/v1/org-user/${u}/safety-score?interval=90`);
    for (const t of trips.filter((r) => r['org_user_id'] === user).slice(0, 3))
      urls.push(`/v1/org-user/${u}/trip/${encodeURIComponent(String(t['trip_id']))}`);
  }
  pristine = mkdtempSync(join(tmpdir(), 'dds-pristine-'));
  cpSync(ws.dir, pristine, { recursive: true });
}, 120_000);
afterAll(() => {
  ws?.cleanup();
  if (pristine) rmSync(pristine, { recursive: true, force: true });
  removeBuiltFolders();
});

describe('serving pack checksums', () => {
  it('records a SHA-256 for every pack file and its extras in the manifest', () => {
    const m = manifestOf(ws.paths)!;
    const names = Object.values(m.pack!.files)
      .flat()
      .flatMap((f) => [f, `${f}.extras`]);
    expect(Object.keys(m.pack!.sha256 ?? {}).sort()).toEqual(names.sort());
    for (const name of names) expect(m.pack!.sha256![name]).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a pack file with one digit changed: SQL serves it with the answers of the intact pack, and says so once', async () => {
    const intactDir = copyOfData('intact');
    const damagedDir = copyOfData('digit');
    const file = packFile(damagedDir, 'stats');
    const bytes = readFileSync(file);
    // a digit inside the first row's JSON (payloads come first in the file)
    const at = bytes.findIndex((b, i) => i < bytes.indexOf(0x5d) && b >= 0x31 && b <= 0x38);
    expect(at).toBeGreaterThanOrEqual(0);
    overwrite(file, at, Buffer.from([bytes[at]! + 1]));
    const intact = await createApi({ dataDir: intactDir, now: () => clock, pollMs: 60_000 });
    await intact.ctx.snapshots.use((s) => s.extrasChecked);
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    let damaged: Api | null = null;
    try {
      damaged = await createApi({ dataDir: damagedDir, now: () => clock, pollMs: 60_000 });
    } finally {
      spy.mockRestore();
    }
    try {
      expect(await readyz(intact)).toMatchObject({ status: 'ready', serving: 'pack' });
      expect(await readyz(damaged)).toMatchObject({
        status: 'ready',
        serving: 'sql',
        reason: 'pack_checksum_mismatch',
      });
      expect(lines.filter((l) => l.includes('pack_checksum_mismatch'))).toHaveLength(1);
      expect(await damaged.ctx.snapshots.use(async (s) => s.pack)).toEqual({ value: null });
      const fromPack = await answers(intact);
      expect(fromPack.filter((a) => a.status === 200).length).toBeGreaterThan(urls.length / 2);
      expect(await answers(damaged)).toEqual(fromPack);
    } finally {
      await intact.close();
      await damaged.close();
    }
  });

  it('never answers 500 when 4 KB of garbage land in a pack file; /readyz says SQL serves', async () => {
    for (const section of ['trips', 'stats', 'scores'] as const) {
      const dir = copyOfData(`garbage-${section}`);
      const file = packFile(dir, section);
      overwrite(file, Math.floor(statSync(file).size / 3), Buffer.alloc(4096, 0xab));
      const api = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000 });
      try {
        expect(await readyz(api)).toMatchObject({ status: 'ready', serving: 'sql', reason: 'pack_checksum_mismatch' });
        for (const a of await answers(api)) expect([200, 404], a.url).toContain(a.status);
      } finally {
        await api.close();
      }
    }
  });

  it('answers trip details by SQL until the events files are verified, and refuses the pack when one does not match', async () => {
    const dir = copyOfData('extras');
    const extras = `${packFile(dir, 'trips')}.extras`;
    overwrite(extras, 100, Buffer.from([readFileSync(extras)[100]! ^ 0x01]));
    const sql = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000, serving: 'sql' });
    const api = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000 });
    try {
      expect(await answers(api)).toEqual(await answers(sql));
      await api.ctx.snapshots.use((s) => s.extrasChecked);
      expect(await readyz(api)).toMatchObject({ status: 'ready', serving: 'sql', reason: 'pack_checksum_mismatch' });
      expect(await answers(api)).toEqual(await answers(sql));
    } finally {
      await api.close();
      await sql.close();
    }
  });

  it('falls back to SQL for a request whose pack read fails after the pack was verified, and stops using the pack', async () => {
    const dir = copyOfData('late-damage');
    const sql = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000, serving: 'sql' });
    const api = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000 });
    try {
      expect(await readyz(api)).toMatchObject({ serving: 'pack' });
      const expected = await answers(sql);
      // damaged while served: the first rows of the trips file no longer parse
      overwrite(packFile(dir, 'trips'), 0, Buffer.alloc(4096, 0xff));
      expect(await answers(api)).toEqual(expected);
      expect(await readyz(api)).toMatchObject({ status: 'ready', serving: 'sql', reason: 'pack_read_failed' });
    } finally {
      await api.close();
      await sql.close();
    }
  });
});

describe('a corrupt standby slot', () => {
  it.each([
    ['garbage over the whole file', (file: string) => writeFileSync(file, Buffer.alloc(4096, 0x5a))],
    [
      'garbage over its blocks, headers intact',
      (file: string) => overwrite(file, 3 * 4096, Buffer.alloc(statSync(file).size - 3 * 4096, 0x5a)),
    ],
  ])('is rebuilt from the warehouse by the next publish (%s)', async (_what, damage) => {
    const load = (w: Workspace, n: number, day: string) =>
      runLoad({
        dataDir: w.dir,
        inputs: [
          writeNdjson(join(w.dir, 'in', `${n}.ndjson`), [
            tripRecord({ appId: w.appId, tripId: `t${n}`, start: `${day}T08:00:00Z`, seconds: 300 }),
          ]),
        ],
        now: clock,
      });
    // two loads, so slot b serves and slot a stands by: the same start for both damages, built once
    const { ws: w } = await builtFolder('trust/two-loads', 'UTC', async (t) => {
      await load(t, 1, '2026-11-16');
      await load(t, 2, '2026-11-17');
    });
    try {
      expect(manifestOf(w.paths)?.slot).toBe('b');
      damage(slotFile(w.paths.publishedDir, 'a'));
      const lines: string[] = [];
      const third = await runLoad({
        dataDir: w.dir,
        now: clock,
        progress: (m) => lines.push(m),
        inputs: [
          writeNdjson(join(w.dir, 'in', '3.ndjson'), [
            tripRecord({ appId: w.appId, tripId: 't3', start: '2026-11-18T08:00:00Z', seconds: 300 }),
          ]),
        ],
      });
      expect(third.publish).toMatchObject({ published: true, slot: 'a', fromVersion: 0, corruptSlotRebuilt: true });
      expect(lines.filter((l) => /standby slot slot-a\.duckdb is corrupt/.test(l))).toHaveLength(1);
      expect((await publishedRows(w.paths, 'trips', 'trip_id')).map((t) => t['trip_id'])).toEqual(['t1', 't2', 't3']);
      // and the next publish is incremental again (slot b was caught up to version 3 by the third load)
      const fourth = await load(w, 4, '2026-11-19');
      expect(third.publish.settled).toMatchObject({ slot: 'b', fromVersion: 2, version: 3 });
      expect(fourth.publish).toMatchObject({ slot: 'b', fromVersion: 3 });
      expect(fourth.publish.corruptSlotRebuilt).toBe(false);
    } finally {
      w.cleanup();
    }
  });
});

describe('a manifest removed under a running API', () => {
  it('keeps the API serving what it had; the next score job publishes into the slot no reader holds and the API switches to it', async () => {
    const dir = copyOfData('no-manifest');
    // one process: what one API process does when its manifest goes
    const server = spawn(
      process.execPath,
      ['jobs/serve.js', '--data-dir', dir, '--port', '0', '--workers', '1', '--log', 'false'],
      { cwd: ROOT },
    );
    let err = '';
    try {
      const base = await new Promise<string>((resolve, reject) => {
        server.stderr!.on('data', (chunk: Buffer) => {
          err += chunk.toString();
          const m = /listening on (http:\/\/\S+)/.exec(err);
          if (m) resolve(m[1] as string);
        });
        server.on('exit', () => reject(new Error(`server exited: ${err}`)));
      });
      const ready = async () => (await (await fetch(`${base}/readyz`)).json()) as Record<string, unknown>;
      const served = manifestOf({
        ...ws.paths,
        manifestFile: join(dir, 'published', 'manifest.json'),
      } as typeof ws.paths)!;
      expect(await ready()).toMatchObject({ status: 'ready', slot: served.slot, version: served.version });
      rmSync(join(dir, 'published', 'manifest.json'));
      // polled every 250 ms by the server: generous bounds for a busy machine
      for (
        let i = 0;
        i < 2000 && ((await ready())['reason'] !== 'manifest_missing' || !err.includes('is missing'));
        i++
      )
        await new Promise((r) => setTimeout(r, 25));
      expect(await ready()).toMatchObject({
        status: 'ready',
        slot: served.slot,
        version: served.version,
        reason: 'manifest_missing',
      });
      expect(err).toContain('manifest.json is missing; still serving');
      // a publish that waited for the served slot would fail after this
      process.env['DRIVING_PUBLISH_LOCK_WAIT_MS'] = '3000';
      let result: Awaited<ReturnType<typeof runScore>>;
      try {
        result = await runScore({ dataDir: dir, date: '2026-11-20', now: new Date('2026-11-20T13:00:00Z') });
      } finally {
        delete process.env['DRIVING_PUBLISH_LOCK_WAIT_MS'];
      }
      const other = served.slot === 'a' ? 'b' : 'a';
      expect(result.publish).toMatchObject({ published: true, slot: other });
      let now: Record<string, unknown> = {};
      for (let i = 0; i < 2000 && now['version'] !== result.publish.version; i++) {
        now = await ready();
        if (now['version'] !== result.publish.version) await new Promise((r) => setTimeout(r, 25));
      }
      expect(now).toMatchObject({ status: 'ready', slot: other, version: result.publish.version, serving: 'pack' });
      expect(now['reason']).toBeUndefined();
      const res = await fetch(`${base}${urls[0]}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
    } finally {
      server.kill('SIGTERM');
    }
  });
});

describe('/readyz', () => {
  it('shows a status, the slot and version, the serving mode and coarse states; no paths, sizes or error texts', async () => {
    const api = await createApi({ dataDir: copyOfData('readyz'), now: () => clock, pollMs: 60_000 });
    try {
      const body = await readyz(api);
      expect(Object.keys(body).sort()).toEqual([
        'disk',
        'landing',
        'pageCache',
        'serving',
        'slot',
        'snapshot',
        'status',
        'version',
      ]);
      // the landing area in counts only
      expect(body['landing']).toEqual({ waiting: 0, oldestWaitingSeconds: null, failed: 0, refused: 0 });
      // the disk as a state, not its bytes
      expect(['ok', 'nearly_full', 'full']).toContain(body['disk']);
      expect(body).toMatchObject({ status: 'ready', serving: 'pack', snapshot: `${body['slot']}@${body['version']}` });
      expect(['warming', 'warm']).toContain(body['pageCache']);
    } finally {
      await api.close();
    }
    // a manifest naming a slot that cannot be opened: the reason, not DuckDB's text with the path
    const dir = copyOfData('readyz-broken');
    writeFileSync(
      join(dir, 'published', 'manifest.json'),
      JSON.stringify({
        slot: 'a',
        file: 'missing.duckdb',
        version: 1,
        warehouseId: 'x',
        publishedAt: clock.toISOString(),
      }),
    );
    const broken = await createApi({ dataDir: dir, now: () => clock, pollMs: 60_000 });
    try {
      const res = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ status: 'not_ready', reason: 'snapshot_open_failed' });
      expect(res.body).not.toContain('/');
    } finally {
      await broken.close();
    }
  });
});
