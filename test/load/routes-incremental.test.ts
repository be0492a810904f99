// A continuous load's batches look after their own route files and the reported ones only
// (src/publish/route-step.ts, `routesIncremental`): the full upkeep looks at every route file
// within retention, one a version and trip date, which batches every few seconds make hundreds of
// thousands of. What the full upkeep saw is kept a row a file, so a batch adds its files' rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { openDatabase } from '../../src/db/open.js';
import { reportDamage } from '../../src/damage/reports.js';
import { routeFile, verifyRouteFile } from '../../src/route/route-file.js';
import { fileIdentity } from '../../src/serving/checksum.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;
const now = new Date('2026-11-21T08:00:00Z');
let n = 0;

/** Loads one trip of 2026-11-20 as its own file; returns the load's result and its route file. */
async function loadTrip(routesIncremental: boolean) {
  n++;
  const file = writeNdjson(join(ws.dir, 'in', `t-${n}.ndjson`), [
    tripRecord({
      appId: ws.appId,
      tripId: `t-${n}`,
      start: `2026-11-20T${String(5 + n).padStart(2, '0')}:00:00Z`,
      seconds: 120,
    }),
  ]);
  // each batch's own file is what this looks at: none merged into another (src/compact/)
  const result = await runLoad({ dataDir: ws.dir, inputs: [file], now, routesIncremental, compactMerges: 0 });
  const version = result.files[0]?.version as number;
  return { result, version, route: routeFile(ws.paths.routesDir, '2026-11-20', version) };
}

const recorded = async () =>
  Object.fromEntries(
    (await warehouseRows(ws.paths, 'select path, identity from route_files_checked')).map((r) => [
      String(r['path']),
      String(r['identity']),
    ]),
  );
const complete = async () =>
  Number((await warehouseRows(ws.paths, "select value from meta where key = 'routes_complete_version'"))[0]?.['value']);
const rel = (file: string) => relative(ws.paths.publishedDir, file);

beforeAll(async () => {
  ws = await workspace('UTC');
});
afterAll(() => ws?.cleanup());

describe('the route files of a continuous load', () => {
  it('records the files a batch writes, a row each, and the version up to which every trip has one', async () => {
    const first = await loadTrip(false);
    expect(existsSync(first.route)).toBe(true);
    const second = await loadTrip(true);
    expect(existsSync(second.route)).toBe(true);
    expect(second.result.publish.routesRead).toBe(0);
    expect(await recorded()).toMatchObject({
      [rel(first.route)]: fileIdentity(first.route),
      [rel(second.route)]: fileIdentity(second.route),
    });
    expect(await complete()).toBe(second.version);
  });

  it('looks at no file but its own and the reported ones; a full upkeep looks at them all', async () => {
    // a route file nobody recorded (copied in by hand): only a full upkeep finds and reads it
    const stranger = routeFile(ws.paths.routesDir, '2026-11-20', 999_999);
    copyFileSync(routeFile(ws.paths.routesDir, '2026-11-20', 1), stranger);
    const batch = await loadTrip(true);
    expect(batch.result.publish.routesRead).toBe(0);
    expect(Object.keys(await recorded())).not.toContain(rel(stranger));
    const full = await loadTrip(false);
    expect(full.result.publish.routesRead).toBe(1);
    expect(Object.keys(await recorded())).toContain(rel(stranger));
    rmSync(stranger);
  });

  it('checks a reported file in full and writes it again when damaged; a file gone unreported waits for a full upkeep', async () => {
    const { route } = await loadTrip(true);
    writeFileSync(route, 'not a route file');
    reportDamage(ws.paths.publishedDir, rel(route), 'test');
    const next = await loadTrip(true);
    expect(next.result.publish.damagedRebuilt).toContain(rel(route));
    expect(() => verifyRouteFile(route)).not.toThrow();
    // removed without a word: a batch does not look, a full upkeep (the watch's first batch, and
    // one a day) writes it again
    rmSync(next.route);
    await loadTrip(true);
    expect(existsSync(next.route)).toBe(false);
    await loadTrip(false);
    expect(existsSync(next.route)).toBe(true);
    expect(() => verifyRouteFile(next.route)).not.toThrow();
  });

  it('forgets the rows of files that are gone at a full upkeep, and not before', async () => {
    const stray = routeFile(ws.paths.routesDir, '2026-11-20', 888_888);
    copyFileSync(routeFile(ws.paths.routesDir, '2026-11-20', 1), stray);
    await loadTrip(false);
    expect(Object.keys(await recorded())).toContain(rel(stray));
    rmSync(stray);
    await loadTrip(true);
    expect(Object.keys(await recorded())).toContain(rel(stray));
    await loadTrip(false);
    expect(Object.keys(await recorded())).not.toContain(rel(stray));
    // the files of served trips stay recorded as they are
    const rows = await recorded();
    for (const [path, identity] of Object.entries(rows))
      expect(fileIdentity(join(ws.paths.publishedDir, path))).toBe(identity);
  });

  it("takes over an older warehouse's record (one JSON object in meta) without reading the files again", async () => {
    const before = await recorded();
    const db = await openDatabase(ws.paths.warehouseFile);
    try {
      await db.connection.run('delete from route_files_checked');
      await db.connection.run("insert or replace into meta values ('route_files_checked', $v)", {
        v: JSON.stringify(before),
      });
    } finally {
      db.close();
    }
    const full = await loadTrip(false);
    expect(full.result.publish.routesRead).toBe(0);
    expect(await recorded()).toMatchObject(before);
    expect(await warehouseRows(ws.paths, "select * from meta where key = 'route_files_checked'")).toEqual([]);
  });
});
