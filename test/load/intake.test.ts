// The landing area as an unlucky operator or a hostile uploader leaves it: links, FIFOs, files
// still being written, a file appended to while it loads; and the modes of what the jobs create.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLoad } from '../../src/jobs/load.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { sqliteFileOf } from '../../src/state/db.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('Europe/Berlin');
});
afterEach(() => ws.cleanup());

const now = new Date('2026-11-21T08:00:00Z');
const trip = (id: string) =>
  tripRecord({ appId: ws.appId, tripId: id, start: '2026-11-20T08:00:00+01:00', seconds: 600 });
const landing = (name: string) => join(ws.paths.landingDir, name);
const tripIds = async () =>
  (await warehouseRows(ws.paths, 'select trip_id from trips order by trip_id')).map((r) => r['trip_id']);

describe('intake: only regular files, never through a link', () => {
  it('leaves a link to the state store alone: none of its secrets reach the quarantine, the other files load', async () => {
    mkdirSync(ws.paths.landingDir, { recursive: true });
    symlinkSync(sqliteFileOf(ws.dir), landing('x.ndjson'));
    writeNdjson(landing('y.ndjson'), [trip('good-1')]);
    const result = await runLoad({ dataDir: ws.dir, now });
    expect(result.refused).toEqual([
      { file: landing('x.ndjson'), reason: 'not_a_regular_file', kind: 'symbolic link' },
    ]);
    expect(result.refusedNamed).toBe(false);
    expect(result.totals.filesFailed).toBe(0);
    expect(await tripIds()).toEqual(['good-1']);
    expect(await warehouseRows(ws.paths, 'select * from quarantine')).toEqual([]);
    expect(lstatSync(landing('x.ndjson')).isSymbolicLink()).toBe(true);
  });

  it('leaves a hard link to the state store alone like a symbolic link: reported, never read, the other files load', async () => {
    mkdirSync(ws.paths.landingDir, { recursive: true });
    linkSync(sqliteFileOf(ws.dir), landing('x.ndjson'));
    const secrets = readFileSync(sqliteFileOf(ws.dir));
    writeNdjson(landing('y.ndjson'), [trip('good-1')]);
    const result = await runLoad({ dataDir: ws.dir, now });
    expect(result.refused).toEqual([{ file: landing('x.ndjson'), reason: 'not_a_regular_file', kind: 'hard link' }]);
    expect(result.totals.filesFailed).toBe(0);
    expect(await tripIds()).toEqual(['good-1']);
    expect(await warehouseRows(ws.paths, 'select * from quarantine')).toEqual([]);
    // left where it is, still the apps file's second name, and nothing was archived from it
    expect(statSync(landing('x.ndjson')).nlink).toBe(2);
    expect(readFileSync(landing('x.ndjson')).equals(secrets)).toBe(true);
    expect(readdirSync(join(ws.paths.landingDir, 'loaded', '2026-11-21'))).toEqual(['y.ndjson']);
    expect(existsSync(join(ws.paths.landingDir, 'failed'))).toBe(false);
  });

  it('does not stop at a dangling link or a FIFO', async () => {
    mkdirSync(ws.paths.landingDir, { recursive: true });
    symlinkSync(join(ws.dir, 'nowhere.ndjson'), landing('a-dangling.ndjson'));
    execFileSync('mkfifo', [landing('b-fifo.ndjson')]);
    writeNdjson(landing('c.ndjson'), [trip('good-2')]);
    const result = await runLoad({ dataDir: ws.dir, now });
    expect(result.refused.map((r) => [r.file, r.kind])).toEqual([
      [landing('a-dangling.ndjson'), 'symbolic link'],
      [landing('b-fifo.ndjson'), 'FIFO'],
    ]);
    expect(await tripIds()).toEqual(['good-2']);
  });

  it('refuses a link named with --input as bad input, and one inside an --input folder', async () => {
    const real = writeNdjson(join(ws.dir, 'in', 'real.ndjson'), [trip('good-3')]);
    symlinkSync(real, join(ws.dir, 'in', 'link.ndjson'));
    const named = await runLoad({ dataDir: ws.dir, inputs: [join(ws.dir, 'in', 'link.ndjson')], now });
    expect(named.refusedNamed).toBe(true);
    expect(named.totals.files).toBe(0);
    const folder = await runLoad({ dataDir: ws.dir, inputs: [join(ws.dir, 'in')], now });
    expect(folder.refused.map((r) => r.file)).toEqual([join(ws.dir, 'in', 'link.ndjson')]);
    expect(await tripIds()).toEqual(['good-3']);
  });

  it('ignores files still being written: dot names, .tmp and .part', async () => {
    mkdirSync(ws.paths.landingDir, { recursive: true });
    for (const name of ['.upload.ndjson', 'day.ndjson.tmp', 'day.ndjson.part'])
      writeNdjson(landing(name), [trip(`w-${name}`)]);
    writeNdjson(landing('done.ndjson'), [trip('done')]);
    const result = await runLoad({ dataDir: ws.dir, now });
    expect(result.refused).toEqual([]);
    expect(await tripIds()).toEqual(['done']);
    for (const name of ['.upload.ndjson', 'day.ndjson.tmp', 'day.ndjson.part'])
      expect(existsSync(landing(name))).toBe(true);
  });
});

describe('intake: a file that changes while it loads', () => {
  it('keeps nothing of it, leaves it in the landing area, and loads all of it on the next run', async () => {
    mkdirSync(ws.paths.landingDir, { recursive: true });
    const file = writeNdjson(landing('growing.ndjson'), [trip('g-1'), trip('g-2')]);
    const first = await runLoad({
      dataDir: ws.dir,
      now,
      afterStage: () => appendFileSync(file, `${JSON.stringify(trip('g-3'))}\n`),
    });
    expect(first.files[0]?.failed).toMatch(/^changed_during_load: /);
    expect(first.files[0]?.retry).toBe(true);
    expect(first.totals.tripsLoaded).toBe(0);
    expect(await tripIds()).toEqual([]);
    expect(await warehouseRows(ws.paths, 'select * from loaded_files')).toEqual([]);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(join(ws.paths.landingDir, 'failed'))).toBe(false);
    // no raw points of it either
    const pointFiles = existsSync(ws.paths.pointsDir)
      ? readdirSync(ws.paths.pointsDir, { recursive: true }).filter((n) => String(n).endsWith('.parquet'))
      : [];
    expect(pointFiles).toEqual([]);

    const second = await runLoad({ dataDir: ws.dir, now });
    expect(second.totals.tripsLoaded).toBe(3);
    expect(await tripIds()).toEqual(['g-1', 'g-2', 'g-3']);
  });
});

describe('files the jobs create', () => {
  it('are readable by their owner only (0600), folders 0700', async () => {
    const repo = fileURLToPath(new URL('../..', import.meta.url));
    const job = (name: string, ...args: string[]) =>
      execFileSync(process.execPath, [join(repo, 'jobs', `${name}.js`), '--data-dir', ws.dir, ...args], {
        stdio: 'pipe',
        env: { ...process.env, DRIVING_LOAD_CONCURRENCY: '1' },
      });
    job('generate', '--users', '3', '--days', '2', '--end-date', '2026-11-20');
    job('load');
    job('score', '--date', '2026-11-21');
    job('export');
    const loose: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        const st = lstatSync(path);
        if ((st.mode & 0o077) !== 0) loose.push(`${path.slice(ws.dir.length)} ${(st.mode & 0o777).toString(8)}`);
        if (st.isDirectory()) walk(path);
      }
    };
    walk(ws.dir);
    expect(loose).toEqual([]);
    // the jobs made them: the warehouse, points, slots, serving files, archives, events, passport
    expect(statSync(ws.paths.warehouseFile).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(ws.paths.landingDir, 'loaded')).length).toBeGreaterThan(0);
  });
});
