// jobs/quarantine.js as a real process on a warehouse two real loads wrote: every quarantined
// record and event listed with its id, load time, reason and file:line, the filters, one shown
// whole with its raw line as delivered, and a warehouse held by another job said as busy (exit 3).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { badEvents, tripRecord } from '../helpers/trips.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { holdDatabase, runJobProcess } from '../helpers/job-process.js';

let ws: Workspace;
let fileA = '';
let fileB = '';
/** The load batch of each file, read back from the warehouse: ids are `<batch>-<line>`. */
let a = 0;
let b = 0;

beforeAll(async () => {
  ws = await workspace('UTC');
  const good = (id: string, extra: Record<string, unknown> = {}) =>
    tripRecord({ appId: ws.appId, tripId: id, start: '2026-11-19T08:00:00Z', seconds: 120, extra });
  const withBadEvents = { ...good('ok-1'), events: badEvents(true) };
  // lines 2, 3, 4 are rejected; line 1's first two events are quarantined (its trip is kept)
  fileA = writeNdjson(join(ws.dir, 'in', 'a.ndjson'), [
    withBadEvents,
    '{"appId": "truncated',
    '[1, 2]',
    good('x1', { os: 'windows' }),
    good('ok-2'),
  ]);
  fileB = writeNdjson(join(ws.dir, 'in', 'b.ndjson'), ['not json at all', good('x2', { appId: 'someone-else' })]);
  await runLoad({ dataDir: ws.dir, inputs: [fileA], now: new Date('2026-11-20T08:00:00Z') });
  await runLoad({ dataDir: ws.dir, inputs: [fileB], now: new Date('2026-11-21T09:30:00Z') });
  const batches = await warehouseRows(ws.paths, 'select distinct source_file, batch_id from quarantine');
  a = Number(batches.find((r) => r['source_file'] === fileA)?.['batch_id']);
  b = Number(batches.find((r) => r['source_file'] === fileB)?.['batch_id']);
});

afterAll(() => ws.cleanup());

const quarantine = (args: string[]) => runJobProcess('quarantine', [...args, '--data-dir', ws.dir]);

describe('quarantine.js', () => {
  it('lists every quarantined record and event, newest load first, with id, time, reason and file:line', async () => {
    const r = await quarantine(['--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.matching).toBe(7);
    expect(
      out.items.map((i: Record<string, unknown>) => [
        i['id'],
        i['quarantinedAt'],
        i['kind'],
        i['reason'],
        i['sourceFile'],
        i['lineNo'],
      ]),
    ).toEqual([
      [`${b}-1`, '2026-11-21T09:30:00.000Z', 'record', 'invalid_json', fileB, 1],
      [`${b}-2`, '2026-11-21T09:30:00.000Z', 'record', 'unknown_app', fileB, 2],
      [`${a}-1-e1`, '2026-11-20T08:00:00.000Z', 'event', 'event_time_inverted', fileA, 1],
      [`${a}-1-e2`, '2026-11-20T08:00:00.000Z', 'event', 'unknown_event_type', fileA, 1],
      [`${a}-2`, '2026-11-20T08:00:00.000Z', 'record', 'invalid_json', fileA, 2],
      [`${a}-3`, '2026-11-20T08:00:00.000Z', 'record', 'not_an_object', fileA, 3],
      [`${a}-4`, '2026-11-20T08:00:00.000Z', 'record', 'invalid_os', fileA, 4],
    ]);
    expect(out.byReason).toEqual([
      { kind: 'record', reason: 'invalid_json', count: 2 },
      { kind: 'record', reason: 'invalid_os', count: 1 },
      { kind: 'record', reason: 'not_an_object', count: 1 },
      { kind: 'record', reason: 'unknown_app', count: 1 },
      { kind: 'event', reason: 'event_time_inverted', count: 1 },
      { kind: 'event', reason: 'unknown_event_type', count: 1 },
    ]);
    // the text: a head with the counts, then one line per item
    const text = await quarantine([]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^quarantine list: 7 quarantined \(5 record\(s\) rejected, 2 event\(s\) set aside\)\n/);
    expect(text.stdout).toContain(
      'by reason: invalid_json 2, invalid_os 1, not_an_object 1, unknown_app 1, event_time_inverted 1 (event), unknown_event_type 1 (event)',
    );
    expect(text.stdout).toMatch(new RegExp(`^  ${a}-3 +2026-11-20 08:00:00  record  not_an_object +${fileA}:3$`, 'm'));
  });

  it('filters by the day of the load, the reason, the kind and the app, and shows at most --limit', async () => {
    const ids = async (args: string[]) => {
      const r = await quarantine([...args, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      return { matching: out.matching as number, ids: out.items.map((i: { id: string }) => i.id) as string[] };
    };
    // every run at once: each is a process of its own, reading the warehouse read-only
    const [day, reason, events, none, mine, theirs, limit, limited] = await Promise.all([
      ids(['--date', '2026-11-21']),
      ids(['list', '--reason', 'invalid_json']),
      ids(['--kind', 'event', '--date', '2026-11-20']),
      ids(['--date', '2026-11-22']),
      ids(['--app', ws.appId, '--kind', 'record']),
      ids(['--app', 'someone-else']),
      ids(['--limit', '3']),
      quarantine(['--limit', '3']),
    ]);
    expect(day).toEqual({ matching: 2, ids: [`${b}-1`, `${b}-2`] });
    expect(reason).toEqual({ matching: 2, ids: [`${b}-1`, `${a}-2`] });
    expect(events).toEqual({ matching: 2, ids: [`${a}-1-e1`, `${a}-1-e2`] });
    expect(none).toEqual({ matching: 0, ids: [] });
    // a record is listed under the appId it carries: line 4 (invalid_os) this app's, line 2 of b another's
    expect(mine).toEqual({ matching: 1, ids: [`${a}-4`] });
    expect(theirs).toEqual({ matching: 1, ids: [`${b}-2`] });
    expect(limit).toEqual({ matching: 7, ids: [`${b}-1`, `${b}-2`, `${a}-1-e1`] });
    expect(limited.stdout).toMatch(/^quarantine list: 7 quarantined .*; the 3 newest shown \(--limit\)$/m);
  });

  it('shows one whole: its reason, file and line, and the raw line exactly as delivered', async () => {
    const record = await quarantine(['show', `${a}-2`, '--json']);
    expect(record.code, record.stderr).toBe(0);
    expect(JSON.parse(record.stdout).item).toMatchObject({
      id: `${a}-2`,
      kind: 'record',
      reason: 'invalid_json',
      sourceFile: fileA,
      lineNo: 2,
      raw: '{"appId": "truncated',
    });
    const text = await quarantine(['show', `${a}-2`]);
    expect(text.stdout).toContain(`quarantine show: ${a}-2: record rejected: invalid_json\n`);
    expect(text.stdout).toContain(`  source:  ${fileA}:2\n`);
    expect(text.stdout).toContain('  raw:     {"appId": "truncated\n');
    const event = JSON.parse((await quarantine(['show', `${a}-1-e2`, '--json'])).stdout).item;
    expect(event).toMatchObject({
      kind: 'event',
      reason: 'unknown_event_type',
      tripId: 'ok-1',
      appId: ws.appId,
      lineNo: 1,
    });
    expect(JSON.parse(event.raw)).toMatchObject({ type: 'drifting', startTime: '2026-11-19T08:00:10Z' });
  });

  it('says where a file from the landing area is now: the load moved it to its archive', async () => {
    const landed = await workspace('UTC');
    try {
      writeNdjson(join(landed.paths.landingDir, 'c.ndjson'), ['{"broken']);
      await runLoad({ dataDir: landed.dir, now: new Date('2026-11-22T10:00:00Z') });
      const [row] = await warehouseRows(landed.paths, 'select batch_id from quarantine');
      const r = await runJobProcess('quarantine', [
        'show',
        `${Number(row?.['batch_id'])}-1`,
        '--data-dir',
        landed.dir,
        '--json',
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).item).toMatchObject({
        reason: 'invalid_json',
        raw: '{"broken',
        sourceFile: join(landed.paths.landingDir, 'c.ndjson'),
        nowAt: join(landed.paths.landingDir, 'loaded', '2026-11-22', 'c.ndjson'),
      });
    } finally {
      landed.cleanup();
    }
  });

  it('says what is wrong with a request (exit 2), and that nothing was loaded yet (exit 0)', async () => {
    const missing = await quarantine(['show', `${a}-99`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(new RegExp(`^quarantine show: failed: no quarantined record ${a}-99 `, 'm'));
    const badDate = await quarantine(['--date', '2026-13-01']);
    expect(badDate.code).toBe(2);
    expect(badDate.stderr).toContain("quarantine list: failed: --date must be a date YYYY-MM-DD, got '2026-13-01'");
    const fresh = await workspace('UTC');
    try {
      const none = await runJobProcess('quarantine', ['--data-dir', fresh.dir]);
      expect(none.code).toBe(0);
      expect(none.stdout).toBe('quarantine list: 0 quarantined: nothing has been loaded into this data folder yet\n');
    } finally {
      fresh.cleanup();
    }
  });

  it('reads the warehouse read-only beside readers, and says the warehouse is busy while a job holds it (exit 3)', async () => {
    // two viewers at once: read-only opens share the file
    const [one, two] = await Promise.all([quarantine(['--json']), quarantine(['--json'])]);
    expect([one.code, two.code]).toEqual([0, 0]);
    const holder = await holdDatabase(ws.paths.warehouseFile);
    try {
      // it waits for the holder as every job does (DRIVING_WAREHOUSE_LOCK_WAIT_MS), then says so
      const busy = await runJobProcess('quarantine', ['--data-dir', ws.dir], {
        DRIVING_WAREHOUSE_LOCK_WAIT_MS: '1000',
      });
      expect(busy.code).toBe(3);
      expect(busy.stderr).toMatch(
        new RegExp(
          `^quarantine list: failed: .*warehouse.duckdb is in use by another process, PID ${holder.pid} .*; the warehouse is busy \\(a load, score or export is running\\): run quarantine.js again when it has finished \\(or give it longer: DRIVING_WAREHOUSE_LOCK_WAIT_MS\\)$`,
          'm',
        ),
      );
    } finally {
      await holder.release();
    }
  });
});
