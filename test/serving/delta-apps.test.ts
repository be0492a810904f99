// A delta layer of a publish in which one app has new rows and another has none: the delta holds
// the first app's rows only (the second app's section query is skipped), and the second app's
// rows are still served from the layers below, for trips and statistics alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { runLoad } from '../../src/jobs/load.js';
import { ServingPack } from '../../src/serving/pack.js';
import { SectionFile } from '../../src/serving/pack.js';
import type { Section } from '../../src/serving/format.js';
import { manifestOf, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;
let otherApp: string;
const clock = new Date('2026-11-02T12:00:00Z');

const load = (name: string, records: Record<string, unknown>[]) =>
  runLoad({ dataDir: ws.dir, inputs: [writeNdjson(join(ws.dir, 'in', `${name}.ndjson`), records)], now: clock });

function layerUsers(section: Section, name: string, appId: string): number[] {
  const file = SectionFile.open(join(ws.paths.publishedDir, name), section);
  try {
    return file.usersOf(appId);
  } finally {
    file.close();
  }
}

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  otherApp = (await new AppStore(ws.paths.appsFile).add({ name: 'other app', timeZone: 'UTC' })).appId;
  await load('both', [
    tripRecord({
      appId: ws.appId,
      tripId: 'a-1',
      userId: 101,
      orgUserId: 'a-driver',
      start: '2026-10-30T08:00:00+01:00',
      seconds: 600,
    }),
    tripRecord({
      appId: otherApp,
      tripId: 'b-1',
      userId: 201,
      orgUserId: 'b-driver',
      start: '2026-10-30T09:00:00Z',
      seconds: 600,
    }),
  ]);
  await load('first-only', [
    tripRecord({
      appId: ws.appId,
      tripId: 'a-2',
      userId: 101,
      orgUserId: 'a-driver',
      start: '2026-10-31T08:00:00+01:00',
      seconds: 600,
    }),
  ]);
}, 120_000);
afterAll(() => ws?.cleanup());

describe('a delta layer with one app unchanged', () => {
  it("holds only the changed app's rows, and the other app is served from the layers below", () => {
    const files = manifestOf(ws.paths)?.pack?.files;
    for (const section of ['trips', 'stats'] as const) {
      const layers = files?.[section] ?? [];
      expect(layers, section).toHaveLength(2);
      const delta = layers[1] as string;
      expect(layerUsers(section, delta, ws.appId), section).toEqual([101]);
      expect(layerUsers(section, delta, otherApp), section).toEqual([]);
      expect(layerUsers(section, layers[0] as string, otherApp), section).toEqual([201]);
    }
    const pack = ServingPack.open(ws.paths.publishedDir, files as Record<Section, string[]>);
    try {
      const page = {
        from: new Date(0),
        to: new Date('2100-01-01'),
        afterUs: '9223372036854775807',
        afterTrip: '',
        limit: 10,
      };
      const tripIds = (appId: string, userId: number, zone: string) =>
        pack.tripPage({ appId, userId, zone }, page).map((r) => r['tripId'] ?? r['trip_id']);
      expect(tripIds(otherApp, 201, 'UTC')).toEqual(['b-1']);
      expect(tripIds(ws.appId, 101, 'Europe/Berlin')).toEqual(['a-2', 'a-1']);
      const days = pack
        .statistics({ appId: otherApp, userId: 201, zone: 'UTC' }, 'day', '2026-10-30', '2026-10-31')
        .filter((r) => Number(r['count_trips'] ?? r['countTrips']) > 0);
      expect(days).toHaveLength(1);
    } finally {
      pack.close();
    }
  });
});
