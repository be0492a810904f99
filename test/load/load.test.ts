import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { publishedRows, warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { recordDeletionIn } from '../helpers/deletions.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('Europe/Berlin');
});
afterEach(() => ws.cleanup());

const now = new Date('2026-11-21T08:00:00Z');

describe('load: validation and quarantine', () => {
  it('quarantines each malformed record with its line and reason, and counts dropped points and events', async () => {
    const good = (id: string, extra: Record<string, unknown> = {}) =>
      tripRecord({ appId: ws.appId, tripId: id, start: '2026-11-20T08:00:00+01:00', seconds: 120, extra });
    const base = good('ok-1');
    const points = base['points'] as { t: number; lat: number; lng: number; speed: number }[];
    const withBadPoints = {
      ...good('ok-2'),
      points: [
        ...points,
        { t: points[5]!.t, lat: 1, lng: 1, speed: 1 }, // duplicate_time
        { t: points[6]!.t + 500, lat: 95, lng: 1, speed: 1 }, // invalid_position
        { t: points[6]!.t + 600, lat: 1, lng: 1, speed: -1 }, // negative_speed
        { t: points[0]!.t - 61_000, lat: 1, lng: 1, speed: 1 }, // time_out_of_range
        { t: points[6]!.t + 700, lat: null, lng: 1, speed: 1 }, // non_finite
        { t: points[6]!.t + 800, lat: 'x', lng: 1, speed: 1 }, // non_finite
      ],
      events: [
        {
          type: 'drifting',
          startTime: '2026-11-20T08:00:10+01:00',
          endTime: '2026-11-20T08:00:20+01:00',
          startPoint: { lat: 1, lng: 1 },
          endPoint: { lat: 1, lng: 1 },
        },
        {
          type: 'brake',
          startTime: '2026-11-20T08:00:20+01:00',
          endTime: '2026-11-20T08:00:10+01:00',
          startPoint: { lat: 1, lng: 1 },
          endPoint: { lat: 1, lng: 1 },
        },
        { type: 'brake', startTime: '2026-11-20T08:00:20+01:00', endTime: '2026-11-20T08:00:21+01:00' },
        {
          type: 'brake',
          startTime: '2026-11-20T08:00:20+01:00',
          endTime: '2026-11-20T08:00:21+01:00',
          startPoint: { lat: 1, lng: 1 },
          endPoint: { lat: 1, lng: 1 },
        },
      ],
    };
    const lines = [
      base,
      '{"appId": "truncated',
      '[1, 2]',
      good('x1', { appId: undefined }),
      good('x2', { appId: 'someone-else' }),
      good('x3', { platformUserId: '1001' }),
      good('x4', { platformUserId: -4 }),
      good('x5', { orgUserId: '' }),
      good('x6', { tripId: undefined }),
      good('x7', { os: 'windows' }),
      good('x8', { coordinate: 'BD09' }),
      good('x9', { startTime: '2026-11-20T08:00:00' }),
      good('x10', { endTime: 'soon' }),
      withBadPoints,
      '',
    ];
    const file = writeNdjson(join(ws.dir, 'in', 'corpus.ndjson'), lines);
    const result = await runLoad({ dataDir: ws.dir, inputs: [file], now });

    expect(result.totals.rejected).toEqual({
      invalid_json: 1,
      not_an_object: 1,
      missing_app_id: 1,
      unknown_app: 1,
      invalid_platform_user_id: 2,
      missing_org_user_id: 1,
      missing_trip_id: 1,
      invalid_os: 1,
      invalid_coordinate: 1,
      invalid_start_time: 1,
      invalid_end_time: 1,
    });
    expect(result.totals.tripsLoaded).toBe(2);
    expect(result.totals.pointsDropped).toEqual({
      duplicate_time: 1,
      invalid_position: 1,
      negative_speed: 1,
      time_out_of_range: 1,
      non_finite: 2,
    });
    expect(result.totals.eventsQuarantined).toEqual({
      unknown_event_type: 1,
      event_time_inverted: 1,
      invalid_event: 1,
    });
    expect(result.totals.eventsLoaded).toBe(1);

    const quarantined = await warehouseRows(
      ws.paths,
      "select line_no, reason from quarantine where kind = 'record' order by line_no",
    );
    expect(quarantined.map((r) => [Number(r['line_no']), r['reason']])).toEqual([
      [2, 'invalid_json'],
      [3, 'not_an_object'],
      [4, 'missing_app_id'],
      [5, 'unknown_app'],
      [6, 'invalid_platform_user_id'],
      [7, 'invalid_platform_user_id'],
      [8, 'missing_org_user_id'],
      [9, 'missing_trip_id'],
      [10, 'invalid_os'],
      [11, 'invalid_coordinate'],
      [12, 'invalid_start_time'],
      [13, 'invalid_end_time'],
    ]);
    const raw = await warehouseRows(ws.paths, "select raw from quarantine where reason = 'invalid_json'");
    expect(raw[0]?.['raw']).toBe('{"appId": "truncated');
  });

  it('classifies abnormal trips by the first rule that matches and keeps them out of statistics', async () => {
    const at = '2026-11-20T08:00:00+01:00';
    const records = [
      tripRecord({ appId: ws.appId, tripId: 'normal', start: at, seconds: 300 }),
      tripRecord({
        appId: ws.appId,
        tripId: 'inverted',
        start: at,
        seconds: 300,
        extra: { endTime: '2026-11-20T07:59:00+01:00' },
      }),
      {
        ...tripRecord({ appId: ws.appId, tripId: 'one-point', start: at, seconds: 300 }),
        points: [{ t: Date.parse(at), lat: 52.5, lng: 13.4, speed: 3 }],
      },
      tripRecord({ appId: ws.appId, tripId: 'rocket', start: at, seconds: 300, speed: (i) => (i === 100 ? 70 : 12) }),
      tripRecord({ appId: ws.appId, tripId: 'short', start: at, seconds: 50 }),
      tripRecord({ appId: ws.appId, tripId: 'crawl', start: at, seconds: 300, speed: () => 0.2 }),
    ];
    const file = writeNdjson(join(ws.dir, 'in', 'abnormal.ndjson'), records);
    const result = await runLoad({ dataDir: ws.dir, inputs: [file], now });
    expect(result.totals.tripsAbnormal).toEqual({
      time_inverted: 1,
      too_few_points: 1,
      speed_implausible: 1,
      too_short: 2,
    });

    const trips = await publishedRows(ws.paths, 'trips', 'trip_id');
    expect(trips.map((t) => [t['trip_id'], t['status'], t['abnormal_reason']])).toEqual([
      ['crawl', 'abnormal', 'too_short'],
      ['inverted', 'abnormal', 'time_inverted'],
      ['normal', 'normal', ''],
      ['one-point', 'abnormal', 'too_few_points'],
      ['rocket', 'abnormal', 'speed_implausible'],
      ['short', 'abnormal', 'too_short'],
    ]);
    const stats = await publishedRows(ws.paths, 'stats_daily', 'stat_date');
    expect(stats).toHaveLength(1);
    expect(stats[0]?.['count_trips']).toBe(1);
    expect(Number(stats[0]?.['duration_s'])).toBe(300);
  });
});

describe('load: replacement and idempotency', () => {
  it('replaces a re-sent trip whole, moving its statistics to the new day', async () => {
    const first = tripRecord({
      appId: ws.appId,
      tripId: 't-1',
      start: '2026-11-19T08:00:00+01:00',
      seconds: 600,
      events: [{ type: 'brake', from: 10, to: 12 }],
    });
    const again = tripRecord({ appId: ws.appId, tripId: 't-1', start: '2026-11-20T08:00:00+01:00', seconds: 900 });
    await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'a.ndjson'), [first])], now });
    const result = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'b.ndjson'), [again])],
      now,
    });
    expect(result.totals.tripsReplaced).toBe(1);

    const trips = await publishedRows(ws.paths, 'trips', 'trip_id');
    expect(trips).toHaveLength(1);
    expect(Number(trips[0]?.['duration_s'])).toBe(900);
    expect(trips[0]?.['count_events']).toBe(0);
    expect(await publishedRows(ws.paths, 'trip_events', 'trip_id')).toHaveLength(0);
    const stats = await publishedRows(ws.paths, 'stats_daily', 'stat_date');
    expect(stats.map((s) => [s['stat_date'], s['count_trips']])).toEqual([
      ['2026-11-19', 0],
      ['2026-11-20', 1],
    ]);

    // The next publish brings the other slot, which still holds the first t-1 and its event, up
    // to date: the replaced trip's old row and event must go there too.
    const other = tripRecord({
      appId: ws.appId,
      tripId: 't-2',
      start: '2026-11-21T08:00:00+01:00',
      seconds: 300,
      events: [{ type: 'brake', from: 10, to: 12 }],
    });
    await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'c.ndjson'), [other])], now });
    const after = await publishedRows(ws.paths, 'trips', 'trip_id');
    expect(after.map((t) => [t['trip_id'], Number(t['duration_s'])])).toEqual([
      ['t-1', 900],
      ['t-2', 300],
    ]);
    expect((await publishedRows(ws.paths, 'trip_events', 'trip_id')).map((e) => e['trip_id'])).toEqual(['t-2']);
  });

  it('keeps the last line of a tripId repeated inside one file', async () => {
    const a = tripRecord({ appId: ws.appId, tripId: 'dup', start: '2026-11-20T08:00:00+01:00', seconds: 600 });
    const b = tripRecord({ appId: ws.appId, tripId: 'dup', start: '2026-11-20T09:00:00+01:00', seconds: 700 });
    const result = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'dup.ndjson'), [a, b])],
      now,
    });
    expect(result.totals.tripsLoaded).toBe(1);
    expect(result.totals.tripsReplaced).toBe(1);
    const trips = await publishedRows(ws.paths, 'trips', 'trip_id');
    expect(Number(trips[0]?.['duration_s'])).toBe(700);
  });

  it('changes nothing when the same file is loaded twice', async () => {
    const file = writeNdjson(join(ws.dir, 'in', 'same.ndjson'), [
      tripRecord({ appId: ws.appId, tripId: 's-1', start: '2026-11-20T08:00:00+01:00', seconds: 600 }),
    ]);
    const first = await runLoad({ dataDir: ws.dir, inputs: [file], now });
    const before = await publishedRows(ws.paths, 'trips', 'trip_id');
    const second = await runLoad({ dataDir: ws.dir, inputs: [file], now });
    expect(first.publish.published).toBe(true);
    expect(second.totals.filesSkipped).toBe(1);
    expect(second.publish.published).toBe(false);
    expect(await publishedRows(ws.paths, 'trips', 'trip_id')).toEqual(before);
  });

  it('reads gzipped NDJSON and takes new files from the landing area only once', async () => {
    const { gzipSync } = await import('node:zlib');
    const { writeFileSync, mkdirSync, existsSync } = await import('node:fs');
    mkdirSync(ws.paths.landingDir, { recursive: true });
    const record = tripRecord({ appId: ws.appId, tripId: 'gz-1', start: '2026-11-20T08:00:00+01:00', seconds: 600 });
    writeFileSync(join(ws.paths.landingDir, 'upload-1.ndjson.gz'), gzipSync(`${JSON.stringify(record)}\n`));
    const first = await runLoad({ dataDir: ws.dir, now });
    expect(first.totals.tripsLoaded).toBe(1);
    expect(existsSync(join(ws.paths.landingDir, 'upload-1.ndjson.gz'))).toBe(false);
    const second = await runLoad({ dataDir: ws.dir, now });
    expect(second.totals.files).toBe(0);
  });
});

describe('load: files that cannot be read', () => {
  it('sets an unreadable landing file aside with its reason and loads the others', async () => {
    const { writeFileSync, mkdirSync, readdirSync, readFileSync } = await import('node:fs');
    mkdirSync(ws.paths.landingDir, { recursive: true });
    writeFileSync(
      join(ws.paths.landingDir, 'a-bad.ndjson'),
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]),
    );
    writeNdjson(join(ws.paths.landingDir, 'b-good.ndjson'), [
      tripRecord({ appId: ws.appId, tripId: 'g-1', start: '2026-11-20T08:00:00+01:00', seconds: 600 }),
    ]);
    const result = await runLoad({ dataDir: ws.dir, now });
    expect(result.totals.filesFailed).toBe(1);
    expect(result.totals.tripsLoaded).toBe(1);
    expect(result.files[0]?.failed).toBe('invalid UTF-8 at byte 7 of line 1');
    expect(result.publish.published).toBe(true);
    const failedDir = join(ws.paths.landingDir, 'failed', '2026-11-21');
    expect(readdirSync(failedDir).sort()).toEqual(['a-bad.ndjson', 'a-bad.ndjson.reason.txt']);
    expect(readFileSync(join(failedDir, 'a-bad.ndjson.reason.txt'), 'utf8')).toBe(
      'invalid UTF-8 at byte 7 of line 1\n',
    );
  });

  it('quarantines absurd epoch times instead of failing the file', async () => {
    const record = tripRecord({ appId: ws.appId, tripId: 'e-1', start: '2026-11-20T08:00:00+01:00', seconds: 120 });
    const points = (record['points'] as { t: unknown }[]).slice();
    points[3] = { ...points[3], t: 'NaN' };
    points[4] = { ...points[4], t: 1e20 };
    const file = writeNdjson(join(ws.dir, 'in', 'epoch.ndjson'), [
      { ...record, points },
      { ...record, tripId: 'e-2', startTime: 1e20 },
    ]);
    const result = await runLoad({ dataDir: ws.dir, inputs: [file], now });
    expect(result.totals.rejected).toEqual({ invalid_start_time: 1 });
    expect(result.totals.pointsDropped).toEqual({ non_finite: 2 });
  });
});

describe('load: damaged gzip', () => {
  it('fails a truncated .gz file instead of reading it as a shorter one', async () => {
    const { gzipSync } = await import('node:zlib');
    const { writeFileSync, mkdirSync } = await import('node:fs');
    const records = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify(
        tripRecord({ appId: ws.appId, tripId: `z-${i}`, start: '2026-11-20T08:00:00+01:00', seconds: 300 }),
      ),
    );
    const zipped = gzipSync(records.join('\n') + '\n');
    mkdirSync(join(ws.dir, 'in'), { recursive: true });
    const file = join(ws.dir, 'in', 'cut.ndjson.gz');
    writeFileSync(file, zipped.subarray(0, Math.floor(zipped.length / 2)));
    const result = await runLoad({ dataDir: ws.dir, inputs: [file], now });
    expect(result.totals.filesFailed).toBe(1);
    expect(result.files[0]?.failed).toMatch(/not a complete gzip file/);
    expect(result.totals.tripsLoaded).toBe(0);
  });
});

describe('load: ownership', () => {
  it('does not let one user replace another user’s trip, nor bring back a deleted user', async () => {
    const mine = tripRecord({
      appId: ws.appId,
      tripId: 'owned',
      userId: 1,
      orgUserId: 'a',
      start: '2026-11-20T08:00:00+01:00',
      seconds: 600,
    });
    const theirs = tripRecord({
      appId: ws.appId,
      tripId: 'owned',
      userId: 2,
      orgUserId: 'b',
      start: '2026-11-20T09:00:00+01:00',
      seconds: 600,
    });
    await runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', 'mine.ndjson'), [mine])], now });
    const result = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'theirs.ndjson'), [theirs])],
      now,
    });
    expect(result.totals.rejected).toEqual({ trip_id_taken: 1 });
    expect((await publishedRows(ws.paths, 'trips', 'trip_id')).map((t) => t['org_user_id'])).toEqual(['a']);

    await recordDeletionIn(ws.dir, {
      appId: ws.appId,
      platformUserId: 1,
      orgUserId: 'a',
      requestedAt: now.toISOString(),
    });
    await runLoad({ dataDir: ws.dir, inputs: [], now });
    const late = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'late.ndjson'), [{ ...mine, tripId: 'late' }])],
      now,
    });
    expect(late.totals.rejected).toEqual({ user_deleted: 1 });
    expect(await publishedRows(ws.paths, 'trips', 'trip_id')).toEqual([]);
  });

  it('gives a trip id new to the warehouse to the first user of a file that sends it, as an earlier file would', async () => {
    const first = tripRecord({
      appId: ws.appId,
      tripId: 'contested',
      userId: 11,
      orgUserId: 'first',
      start: '2026-11-20T08:00:00+01:00',
      seconds: 600,
    });
    const second = tripRecord({
      appId: ws.appId,
      tripId: 'contested',
      userId: 12,
      orgUserId: 'second',
      start: '2026-11-20T09:00:00+01:00',
      seconds: 300,
    });
    const again = { ...first, endTime: '2026-11-20T07:15:00Z' };
    const result = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'contested.ndjson'), [first, second, again])],
      now,
    });
    // the second user's line is taken; the first user's later line still replaces its earlier one
    expect(result.files[0]?.records).toEqual({ loaded: 1, superseded_in_file: 1, trip_id_taken: 1 });
    expect(
      await warehouseRows(
        ws.paths,
        "select org_user_id, ended_at::varchar as ended_at from trips where trip_id = 'contested'",
      ),
    ).toEqual([{ org_user_id: 'first', ended_at: '2026-11-20 07:15:00+00' }]);
  });

  it('rejects trip ids longer than 128 characters', async () => {
    const record = tripRecord({
      appId: ws.appId,
      tripId: 'x'.repeat(129),
      start: '2026-11-20T08:00:00+01:00',
      seconds: 600,
    });
    const result = await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', 'long.ndjson'), [record])],
      now,
    });
    expect(result.totals.rejected).toEqual({ invalid_trip_id: 1 });
  });
});
