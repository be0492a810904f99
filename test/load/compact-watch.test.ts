// The continuous load (`load.js --watch`, a real process) merges the route files its batches
// write and removes the serving files no manifest names while it rests (src/compact/step.ts): the
// last batch's own route file and the files only the pack it replaced named are left to its idle
// polls, since no batch follows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { PassportStore } from '../../src/passport/store.js';
import { addDays, todayIn } from '../../src/time.js';
import { manifestOf, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';
import { startJob } from '../helpers/job-process.js';
import { until } from '../helpers/serve-process.js';

let ws: Workspace;
let ids: Map<string, number>;
// the watch runs on the machine's clock: a settled date within retention
const DAY = addDays(todayIn('UTC', new Date()), -3);
const BATCHES = 6;

const routeNames = (): string[] => {
  const dir = join(ws.paths.routesDir, `trip_date=${DAY}`);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

function unnamedPackFiles(): string[] {
  const named = new Set(Object.values(manifestOf(ws.paths)?.pack?.files ?? {}).flat());
  return readdirSync(ws.paths.publishedDir).filter(
    (name) => name.startsWith('serving-') && !named.has(name.replace(/\.extras$/, '')),
  );
}

beforeAll(async () => {
  ws = await workspace('UTC');
  const passport = await PassportStore.open(ws.paths.passportFile);
  ids = await passport.ensureAccounts(ws.appId, ['w-1', 'w-2']);
  passport.close();
});

afterAll(() => ws?.cleanup());

describe('the continuous load at rest', () => {
  it('merges its batches route files by date and removes the serving files no manifest names', async () => {
    const watch = startJob('load', ['--data-dir', ws.dir, '--watch', '--poll-ms', '200']);
    try {
      for (let b = 0; b < BATCHES; b++) {
        const org = `w-${(b % 2) + 1}`;
        const path = join(ws.paths.landingDir, `batch-${b}.ndjson`);
        writeNdjson(`${path}.tmp`, [
          tripRecord({
            appId: ws.appId,
            tripId: `w-${b}`,
            userId: ids.get(org) as number,
            orgUserId: org,
            start: `${DAY}T${String(6 + b).padStart(2, '0')}:00:00Z`,
            seconds: 120,
          }),
        ]);
        const before = manifestOf(ws.paths)?.version ?? 0;
        renameSync(`${path}.tmp`, path);
        await until(() => (manifestOf(ws.paths)?.version ?? 0) > before, `batch ${b} published`);
      }
      await until(() => routeNames().length === 1, 'one route file for the date');
      await until(() => unnamedPackFiles().length === 0, 'no serving file no manifest names');
      expect(routeNames()).toEqual([`v${manifestOf(ws.paths)?.version}.route`]);
    } finally {
      watch.child.kill('SIGTERM');
      await watch.done;
    }
  });
});
