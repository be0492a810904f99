// A publish checks the served pack layers it reads (to merge or scrub them) and those a reader
// reported, not every layer it names again: a score run that reuses the trips section does not
// read it. A damaged layer is still never served (the API verifies each layer before it serves it,
// and reports a mismatch) and never sealed with a fresh checksum: the publish after the report
// writes that section whole. A damaged layer that a publish merges is caught by the publish itself.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createApi } from '../../src/api/http/server.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { readManifest, type Manifest } from '../../src/publish/manifest.js';
import { fileIdentity, sha256File } from '../../src/serving/checksum.js';
import { upkeepRoutes } from '../../src/publish/route-upkeep.js';
import { openDatabase } from '../../src/db/open.js';
import { query } from '../../src/db/sql.js';
import type { Workspace } from '../helpers/workspace.js';
import { filesUnder, overwrite } from '../helpers/files.js';
import { berlinLoaded, FIXTURE_CLOCK } from '../helpers/fixtures.js';

const clock = FIXTURE_CLOCK;
let ws: Workspace;

/** Changes one digit of a layer in place (same inode and size, as a disk or a stray write would). */
function damage(file: string): void {
  const bytes = readFileSync(file);
  const at = bytes.findIndex((b, i) => i > 10 && b >= 0x31 && b <= 0x38);
  overwrite(file, at, Buffer.from([bytes[at]! + 1]));
}

/** Every file the manifest's pack names (and its extras) has the SHA-256 the manifest records. */
function expectSealed(manifest: Manifest): void {
  const named = Object.values(manifest.pack!.files)
    .flat()
    .flatMap((f) => [f, `${f}.extras`]);
  for (const n of named) expect(sha256File(join(ws.paths.publishedDir, n)), n).toBe(manifest.pack!.sha256![n]);
}

async function readyz(): Promise<Record<string, unknown>> {
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const api = await createApi({ dataDir: ws.dir, now: () => clock, pollMs: 60_000 });
  try {
    await api.ctx.snapshots.use((s) => s.extrasChecked);
    return (await api.app.inject({ method: 'GET', url: '/readyz' })).json() as Record<string, unknown>;
  } finally {
    spy.mockRestore();
    await api.close();
  }
}

beforeAll(async () => {
  // 4 users over 6 days, loaded: what is tested here does not depend on the data's seed or size
  ({ ws } = await berlinLoaded());
  await runScore({ dataDir: ws.dir, date: '2026-11-18', now: clock });
}, 180_000);
afterAll(() => ws?.cleanup());

describe('a damaged serving-pack layer a score run reuses', () => {
  it('is not read by that publish, is refused and reported by the API, and the next publish writes its section whole', async () => {
    const served = readManifest(ws.paths.manifestFile)!;
    const name = served.pack!.files.trips[0]!;
    damage(join(ws.paths.publishedDir, name));

    // a new date: only the scores change; the trips layer is named again with its recorded checksum
    const log: string[] = [];
    const scored = await runScore({ dataDir: ws.dir, date: '2026-11-19', now: clock, progress: (m) => log.push(m) });
    expect(scored.publish.published).toBe(true);
    expect(scored.publish.damagedRebuilt).toEqual([]);
    expect(log.some((l) => l.includes('is damaged'))).toBe(false);
    const reused = readManifest(ws.paths.manifestFile)!;
    expect(reused.pack!.files.trips).toEqual([name]);
    expect(reused.pack!.sha256![name]).toBe(served.pack!.sha256![name]);
    expect(sha256File(join(ws.paths.publishedDir, name))).not.toBe(reused.pack!.sha256![name]);

    // where it is read: the API serves none of its bytes, and reports it
    expect(await readyz()).toMatchObject({
      status: 'ready',
      serving: 'sql',
      reason: 'pack_checksum_mismatch',
      damaged: [name],
    });
    expect(readdirSync(join(ws.paths.publishedDir, 'damaged'))).toHaveLength(1);

    // the next publish (a load with nothing new: the report alone makes it publish) writes the trips section whole
    const repairLog: string[] = [];
    const repaired = await runLoad({ dataDir: ws.dir, now: clock, progress: (m) => repairLog.push(m) });
    expect(repaired.publish.damagedRebuilt).toContain(name);
    expect(repairLog.some((l) => l.includes(`serving file ${name} is damaged`))).toBe(true);
    const next = readManifest(ws.paths.manifestFile)!;
    expect(next.pack!.files.trips).not.toContain(name);
    expectSealed(next);
    expect(readdirSync(join(ws.paths.publishedDir, 'damaged'))).toEqual([]);
    const ready = await readyz();
    expect(ready).toMatchObject({ status: 'ready', serving: 'pack' });
    expect(ready['reason']).toBeUndefined();
  });
});

describe('a damaged serving-pack layer a score run merges', () => {
  it('is caught by the publish that would merge it, before it is read: the section is written whole, every file named matching its checksum', async () => {
    const served = readManifest(ws.paths.manifestFile)!;
    const layers = served.pack!.files.scores;
    const name = layers[layers.length - 1]!;
    damage(join(ws.paths.publishedDir, name));

    // each new date adds a delta above it; the layers merge as a binary counter, so within a few
    // dates a merge reaches the damaged layer. Until then it is named again, never copied.
    let caught = false;
    for (const date of ['2026-11-20', '2026-11-21', '2026-11-22', '2026-11-23']) {
      const log: string[] = [];
      const scored = await runScore({ dataDir: ws.dir, date, now: clock, progress: (m) => log.push(m) });
      const next = readManifest(ws.paths.manifestFile)!;
      if (scored.publish.damagedRebuilt!.length === 0) {
        expect(next.pack!.files.scores).toContain(name);
        continue;
      }
      expect(scored.publish.damagedRebuilt).toEqual([name]);
      expect(log.some((l) => l.includes(`serving file ${name} is damaged`))).toBe(true);
      expect(next.pack!.files.scores).not.toContain(name);
      expect(next.pack!.files.scores).toHaveLength(1);
      expectSealed(next);
      caught = true;
      break;
    }
    expect(caught).toBe(true);
    const ready = await readyz();
    expect(ready).toMatchObject({ status: 'ready', serving: 'pack' });
    expect(ready['reason']).toBeUndefined();
  });
});

describe('the route files a publish checks', () => {
  it('are those written since the last check (or reported): an unchanged file is not read again', () => {
    const { publishedDir, routesDir } = ws.paths;
    const files = filesUnder(routesDir)
      .filter((f) => f.endsWith('.route'))
      .sort();
    expect(files.length).toBeGreaterThan(2);
    const first = upkeepRoutes(publishedDir, routesDir, []);
    expect(Object.keys(first.checked).sort()).toEqual(files.map((f) => relative(publishedDir, f)).sort());
    expect(first.removed).toEqual([]);

    // the index's end damaged (a file cut short has no magic there): the same bytes for both files
    const damageEnd = (file: string) => overwrite(file, statSync(file).size - 4, Buffer.from('XXXX'));
    const [unchanged, written, reported] = files as [string, string, string];
    for (const f of [unchanged, written, reported]) damageEnd(f);
    // as if the last publish had seen `unchanged` and `reported` as they are now, and `written` before its write
    const memo = {
      ...first.checked,
      [relative(publishedDir, unchanged)]: fileIdentity(unchanged),
      [relative(publishedDir, reported)]: fileIdentity(reported),
    };
    const report = { report: join(publishedDir, 'damaged', 'x.json'), file: relative(publishedDir, reported) };
    const next = upkeepRoutes(publishedDir, routesDir, [report], undefined, memo);
    expect(next.removed.sort()).toEqual([relative(publishedDir, written), relative(publishedDir, reported)].sort());
    expect(existsSync(written)).toBe(false);
    expect(existsSync(reported)).toBe(false);
    // not read: named as checked with the identity it was recorded with
    expect(existsSync(unchanged)).toBe(true);
    expect(next.checked[relative(publishedDir, unchanged)]).toBe(memo[relative(publishedDir, unchanged)]);
  });

  it('include those the publish wrote itself, as written: the next publish does not read them', async () => {
    const { publishedDir, routesDir } = ws.paths;
    // the test above damaged three files and removed two: the third was written after the last
    // publish's check, so this publish finds it damaged too; it writes all three again
    const before = filesUnder(routesDir).filter((f) => f.endsWith('.route')).length;
    const scored = await runScore({ dataDir: ws.dir, date: '2026-11-19', now: clock });
    expect(scored.publish?.routesWritten).toBe(3);
    const files = filesUnder(routesDir)
      .filter((f) => f.endsWith('.route'))
      .sort();
    expect(files).toHaveLength(before + 2);
    const db = await openDatabase(ws.paths.warehouseFile, { readOnly: true });
    let saved: Record<string, string>;
    try {
      const rows = await query(db.connection, 'select path, identity from route_files_checked order by path');
      saved = Object.fromEntries(rows.map((r) => [String(r['path']), String(r['identity'])]));
    } finally {
      db.close();
    }
    // every route file, the two just written with the identity they have now
    expect(Object.keys(saved)).toEqual(files.map((f) => relative(publishedDir, f)));
    for (const f of files) expect(saved[relative(publishedDir, f)], f).toBe(fileIdentity(f));
  });
});
