import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { openDatabase } from '../../src/db/open.js';
import { run } from '../../src/db/sql.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { builtFolder, removeBuiltFolders } from '../helpers/built-folder.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('America/New_York');
});
afterEach(() => ws.cleanup());
afterAll(removeBuiltFolders);
const now = new Date('2026-11-21T12:00:00Z');

function pendingEvents(): {
  id: string;
  type: string;
  appId: string;
  createdAt: string;
  data: Record<string, unknown>;
}[] {
  if (!existsSync(ws.paths.eventsDir)) return [];
  return readdirSync(ws.paths.eventsDir)
    .sort()
    .flatMap((f) =>
      readFileSync(join(ws.paths.eventsDir, f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    );
}

const trip = (id: string, user: number, start: string) =>
  tripRecord({ appId: ws.appId, tripId: id, userId: user, orgUserId: `d-${user}`, start, seconds: 600 });

/** Makes this test's folder a copy of one where d-1 and d-2 drove on 2026-11-19 and 2026-11-21 was scored (built once). */
async function twoScored(): Promise<void> {
  ws.cleanup();
  ({ ws } = await builtFolder('events/two-scored', 'America/New_York', async (w) => {
    ws = w;
    await runLoad({
      dataDir: ws.dir,
      inputs: [
        writeNdjson(join(ws.dir, 'in', '1.ndjson'), [
          trip('a', 1, '2026-11-19T08:00:00-05:00'),
          trip('b', 2, '2026-11-19T09:00:00-05:00'),
        ]),
      ],
      now,
    });
    await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
  }));
}

describe('events written after a publish', () => {
  it('announces each trip once, with its data in the app zone; a re-sent trip that changed is updated, not created', async () => {
    await runLoad({
      dataDir: ws.dir,
      inputs: [
        writeNdjson(join(ws.dir, 'in', '1.ndjson'), [
          trip('a', 1, '2026-11-20T08:00:00-05:00'),
          trip('b', 2, '2026-11-20T09:00:00-05:00'),
        ]),
      ],
      now,
    });
    const first = pendingEvents();
    expect(first.map((e) => [e.type, e.data['tripId']])).toEqual([
      ['trip.created', 'a'],
      ['trip.created', 'b'],
    ]);
    expect(first[0]).toMatchObject({
      appId: ws.appId,
      data: {
        orgUserId: 'd-1',
        userId: 1,
        status: 'normal',
        startTime: '2026-11-20 08:00:00',
        endTime: '2026-11-20 08:10:00',
      },
    });
    expect(first[0]!.id).toMatch(/^evt_[0-9a-f]{32}$/);

    await runLoad({
      dataDir: ws.dir,
      inputs: [
        writeNdjson(join(ws.dir, 'in', '2.ndjson'), [
          trip('a', 1, '2026-11-20T10:00:00-05:00'),
          trip('c', 1, '2026-11-20T11:00:00-05:00'),
        ]),
      ],
      now,
    });
    // 'a' came again with another start: not created again, but updated (test/webhooks/events-updates.test.ts)
    expect(pendingEvents().map((e) => `${e.type} ${String(e.data['tripId'])}`)).toEqual([
      'trip.created a',
      'trip.created b',
      'trip.created c',
      'trip.updated a',
    ]);
  });

  it('announces each scored user once per run, with both intervals', async () => {
    await twoScored();
    const scores = pendingEvents().filter((e) => e.type === 'safety_score.updated');
    expect(scores.map((e) => e.data['orgUserId'])).toEqual(['d-1', 'd-2']);
    expect(scores[0]!.data).toMatchObject({
      evaluationDate: '2026-11-21',
      intervals: { '30': { tripCount: 1 }, '90': { tripCount: 1 } },
    });
    await runLoad({ dataDir: ws.dir, inputs: [], now });
    expect(pendingEvents().filter((e) => e.type === 'safety_score.updated')).toHaveLength(2);
  });

  it('announces nothing new when a date is scored again with the same data, and only the user whose scores changed', async () => {
    const { rmSync } = await import('node:fs');
    const scoreEvents = () => pendingEvents().filter((e) => e.type === 'safety_score.updated');
    await twoScored();
    const first = scoreEvents();
    expect(first.map((e) => e.data['orgUserId'])).toEqual(['d-1', 'd-2']);
    rmSync(ws.paths.eventsDir, { recursive: true }); // the deliverer took the file

    // a retried run: same data, a later clock
    const again = await runScore({ dataDir: ws.dir, date: '2026-11-21', now: new Date('2026-11-21T13:00:00Z') });
    expect(again.publish.published).toBe(true);
    expect(again.events).toMatchObject({ safetyScoreUpdated: 0, file: null });
    expect(pendingEvents()).toEqual([]);

    // one more trip of user 1 inside the window: only user 1 is announced, with a new id
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '2.ndjson'), [trip('c', 1, '2026-11-20T08:00:00-05:00')])],
      now,
    });
    rmSync(ws.paths.eventsDir, { recursive: true });
    await runScore({ dataDir: ws.dir, date: '2026-11-21', now: new Date('2026-11-21T14:00:00Z') });
    const changed = scoreEvents();
    expect(
      changed.map((e) => [
        e.data['orgUserId'],
        (e.data['intervals'] as Record<string, { tripCount: number }>)['30']?.tripCount,
      ]),
    ).toEqual([['d-1', 2]]);
    expect(first.map((e) => e.id)).not.toContain(changed[0]!.id);
  });

  it('repeats the same score event ids when the job died after writing the events file, and gives values that change back a new id', async () => {
    const { rmSync } = await import('node:fs');
    const scoreIds = () =>
      pendingEvents()
        .filter((e) => e.type === 'safety_score.updated')
        .map((e) => e.id);
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '1.ndjson'), [trip('a', 1, '2026-11-19T08:00:00-05:00')])],
      now,
    });
    await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
    const first = scoreIds();
    expect(first).toHaveLength(1);
    rmSync(ws.paths.eventsDir, { recursive: true });
    // as if the process had died between the events file and the warehouse's record of it
    const db = await openDatabase(ws.paths.warehouseFile);
    await run(db.connection, 'delete from announced_scores');
    await run(db.connection, "update meta set value = '0' where key = 'score_events_version'");
    db.close();
    await runScore({ dataDir: ws.dir, date: '2026-11-21', now: new Date('2026-11-21T13:00:00Z') });
    expect(scoreIds()).toEqual(first);
    rmSync(ws.paths.eventsDir, { recursive: true });
    // B (a second trip in the window), then A again (the trip re-sent outside the window): three facts, three ids
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '2.ndjson'), [trip('b', 1, '2026-11-20T08:00:00-05:00')])],
      now,
    });
    await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
    // loaded after that trip ended: a record time more than 10 minutes after the load's clock is out of range
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '3.ndjson'), [trip('b', 1, '2026-11-21T08:00:00-05:00')])],
      now: new Date('2026-11-21T14:00:00Z'),
    });
    await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
    const later = scoreIds();
    expect(later).toHaveLength(2);
    expect(new Set([...first, ...later]).size).toBe(3);
  });

  it('repeats the same ids when the job died after writing the events file', async () => {
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '1.ndjson'), [trip('a', 1, '2026-11-20T08:00:00-05:00')])],
      now,
    });
    const before = pendingEvents();
    const { rmSync } = await import('node:fs');
    rmSync(ws.paths.eventsDir, { recursive: true }); // the deliverer took the file
    // as if the process had died between the events file and the warehouse's record of it
    const db = await openDatabase(ws.paths.warehouseFile);
    await run(db.connection, 'delete from announced_trips');
    db.close();
    await runLoad({ dataDir: ws.dir, inputs: [], now });
    const after = pendingEvents();
    expect(after.map((e) => e.id)).toEqual(before.map((e) => e.id));
  });

  it('writes nothing when the publish fails', async () => {
    await runLoad({
      dataDir: ws.dir,
      inputs: [writeNdjson(join(ws.dir, 'in', '1.ndjson'), [trip('a', 1, '2026-11-20T08:00:00-05:00')])],
      now,
    });
    const db = await openDatabase(ws.paths.warehouseFile);
    await run(db.connection, 'update stats_daily set mileage_m = mileage_m + 1, version = 2');
    await run(db.connection, "update meta set value = '2' where key = 'version'");
    db.close();
    const files = readdirSync(ws.paths.eventsDir);
    await expect(
      runLoad({
        dataDir: ws.dir,
        inputs: [writeNdjson(join(ws.dir, 'in', '2.ndjson'), [trip('z', 3, '2026-11-20T09:00:00-05:00')])],
        now,
      }),
    ).rejects.toThrow(/checks/);
    expect(readdirSync(ws.paths.eventsDir)).toEqual(files);
  });
});
