// The pending events file is written by DuckDB (sql/ops/events/pending_lines.sql); it must hold the
// bytes JSON.stringify of each event gave when the lines were built in JavaScript.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { AppStore } from '../../src/apps/store.js';
import { installMacros } from '../../src/db/macros.js';
import { query, run, sqlText } from '../../src/db/sql.js';
import { emitEvents } from '../../src/events/emit.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { openWarehouse, warehouseVersion, type Warehouse } from '../../src/warehouse/warehouse.js';
import { ENVELOPE_VERSION } from '../../src/webhooks/envelope.js';
import { tripRecord } from '../helpers/trips.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('America/New_York');
});
afterEach(() => ws.cleanup());
const now = new Date('2026-11-21T12:00:00Z');

// ids with every character JSON escapes differently in DuckDB and JavaScript (\u000B against
// \u000b), a literal backslash-u text that must stay as it is, quotes, slashes, U+2028 and an emoji
const ODD = 'd-\u000b\u000e\u000f\u001a\u001f"\\u001F/é\u2028😀\u0001\t\u007f';

/** The lines as the job built them before DuckDB wrote the file: rows read, JSON.stringify of each. */
async function linesInJavaScript(wh: Warehouse, version: number): Promise<string> {
  const conn = wh.conn;
  const meta = async (key: string) =>
    Number(
      (await query(conn, 'select coalesce(max(value::bigint), 0) as v from meta where key = $key', { key }))[0]?.[
        'v'
      ] ?? 0,
    );
  const tripsSince = Number(
    (await query(conn, 'select coalesce(max(announced_version), 0) as v from announced_trips'))[0]?.['v'] ?? 0,
  );
  const trips = await query(conn, sqlText('ops/events/trip_created'), { since: tripsSince, version });
  await run(conn, `create or replace temp table trip_fingerprints as ${sqlText('ops/events/trip_fingerprints')}`, {
    since: tripsSince,
    version,
  });
  const updated = await query(conn, sqlText('ops/events/trip_updated'));
  const deleted = await query(conn, sqlText('ops/events/user_deleted'), {
    since: await meta('user_events_version'),
    version,
  });
  const scores = await query(
    conn,
    `select id, type, app_id, data from (${sqlText('ops/events/safety_score_updated')})`,
    { since: await meta('score_events_version'), version },
  );
  const createdAt = now.toISOString();
  return [...trips, ...updated, ...scores, ...deleted]
    .map(
      (e) =>
        `${JSON.stringify({ id: e['id'], type: e['type'], version: ENVELOPE_VERSION, createdAt, appId: e['app_id'], data: JSON.parse(String(e['data'])) })}\n`,
    )
    .join('');
}

describe('the pending events file', () => {
  it('holds the bytes JSON.stringify gave, for every kind of event, in the same order', async () => {
    const trip = (id: string, user: number, orgUserId: string, start: string) =>
      tripRecord({
        appId: ws.appId,
        tripId: id,
        userId: user,
        orgUserId,
        start,
        seconds: 600,
        events: [{ type: 'brake', from: 100, to: 103 }],
      });
    await runLoad({
      dataDir: ws.dir,
      now,
      inputs: [
        writeNdjson(join(ws.dir, 'in', '1.ndjson'), [
          trip(`t-${ODD}`, 1, ODD, '2026-11-19T08:00:00-05:00'),
          trip('t-2', 2, 'plain', '2026-11-19T09:00:00-05:00'),
          trip('t-3', 2, 'plain', '2026-11-20T09:00:00-05:00'),
          trip('t-4', 3, 'x\\y', '2026-10-01T09:00:00-04:00'),
        ]),
      ],
    });
    await runScore({ dataDir: ws.dir, date: '2026-11-21', now });

    const wh = await openWarehouse(ws.paths.warehouseFile, await new AppStore(ws.paths.appsFile).list());
    const eventsDir = mkdtempSync(join(tmpdir(), 'dds-events-'));
    try {
      // announce everything again: trip t-2 as changed (trip.updated), the rest as new, every
      // score, and a purged user with an odd id (user.deleted)
      const version = await warehouseVersion(wh.conn);
      await run(wh.conn, "delete from announced_trips where trip_id <> 't-2'");
      await run(wh.conn, "update announced_trips set fingerprint = 'before', announced_version = 0");
      await run(wh.conn, 'delete from announced_scores');
      await run(wh.conn, "delete from meta where key in ('score_events_version', 'user_events_version')");
      await run(
        wh.conn,
        'insert into purged_users by name select $app as app_id, 9 as user_id, $org as org_user_id, null as requested_at, $at::timestamptz as purged_at, $version as version',
        {
          app: ws.appId,
          org: ODD,
          at: now.toISOString(),
          version,
        },
      );

      const expected = await linesInJavaScript(wh, version);
      const result = await emitEvents(wh, eventsDir, version, now);
      const written = readFileSync(result.file!, 'utf8');
      expect(written).toBe(expected);
      expect([result.tripCreated, result.tripUpdated, result.safetyScoreUpdated, result.userDeleted]).toEqual([
        3, 1, 3, 1,
      ]);
      expect(written.split('\n').map((l) => (l ? JSON.parse(l).type : ''))).toEqual([
        'trip.created',
        'trip.created',
        'trip.created',
        'trip.updated',
        'safety_score.updated',
        'safety_score.updated',
        'safety_score.updated',
        'user.deleted',
        '',
      ]);
      expect(written).toContain('\\u001f');
      // 0644 through the process's umask, as the lines written by JavaScript were (a job's is 077)
      expect(statSync(result.file!).mode & 0o777).toBe(0o644 & ~process.umask());
      expect(readdirSync(eventsDir)).toEqual([result.file!.split('/').pop()]);
    } finally {
      wh.close();
      rmSync(eventsDir, { recursive: true, force: true });
    }
  });
});

describe('js_json and js_number', () => {
  it('give the text JSON.stringify gives, for every ASCII character but NUL and for scores rounded to 2 places', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      await installMacros(conn);
      const chars = await query(
        conn,
        "select i, js_json(json_object('s', 'a' || chr(i::integer) || '\\u001F' || chr(i::integer))::varchar) as j from range(1, 128) as t(i)",
      );
      for (const row of chars) {
        const c = String.fromCharCode(Number(row['i']));
        expect(row['j'], `character ${String(row['i'])}`).toBe(JSON.stringify({ s: `a${c}\\u001F${c}` }));
      }
      // every score 0.00-100.00, and a few beyond
      const values = [-0.001, -3.5, 123456.78, 1e14, ...Array.from({ length: 10_001 }, (_, i) => i / 100)];
      const numbers = await query(
        conn,
        "select js_json(json_object('v', js_number(round(v, 2)))::varchar) as j from (select unnest(from_json($values, '[\"DOUBLE\"]')) as v)",
        { values: JSON.stringify(values) },
      );
      // -0.001 rounds to -0, which JSON.stringify writes as 0
      expect(numbers.map((r) => r['j'])).toEqual(values.map((v) => JSON.stringify({ v: Number(v.toFixed(2)) })));
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});
