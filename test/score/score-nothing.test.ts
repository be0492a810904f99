// score.js as a real process says when there is nothing to score, and why: exit 0 (a cron on a
// new, empty install must not alert), or 5 when a script asks with --fail-if-nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { tripRecord } from '../helpers/trips.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { runJobProcess } from '../helpers/job-process.js';

let empty: Workspace;
let loaded: Workspace;

beforeAll(async () => {
  empty = await workspace('UTC');
  loaded = await workspace('UTC');
  const trip = tripRecord({ appId: loaded.appId, tripId: 't-1', start: '2026-11-19T08:00:00Z', seconds: 300 });
  await runLoad({
    dataDir: loaded.dir,
    inputs: [writeNdjson(join(loaded.dir, 'in', 'one.ndjson'), [trip])],
    now: new Date('2026-11-20T08:00:00Z'),
  });
});

afterAll(() => {
  empty.cleanup();
  loaded.cleanup();
});

describe('score.js with nothing to score', () => {
  it('on an empty warehouse: says so and exits 0; with --fail-if-nothing exits 5; --json carries the reason', async () => {
    const r = await runJobProcess('score', ['--data-dir', empty.dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^score: nothing to score: the warehouse holds no normal trips yet \(load some with node jobs\/load.js\); 1 run\(s\) as of \d{4}-\d\d-\d\d, 0 user score\(s\);/,
    );
    const strict = await runJobProcess('score', ['--data-dir', empty.dir, '--fail-if-nothing', '--json']);
    expect(strict.code).toBe(5);
    expect(JSON.parse(strict.stdout)).toMatchObject({
      ok: false,
      nothingToScore: 'the warehouse holds no normal trips yet (load some with node jobs/load.js)',
    });
  });

  it('with trips outside every window: names the days the trips are on; with one inside, scores it and says nothing of the sort', async () => {
    const before = await runJobProcess('score', [
      '--data-dir',
      loaded.dir,
      '--date',
      '2026-06-01',
      '--fail-if-nothing',
    ]);
    expect(before.code).toBe(5);
    expect(before.stdout).toMatch(
      /^score: nothing to score: no normal trip in the 90 days before each date as of 2026-06-01 \(the warehouse's 1 normal trip\(s\) start on 2026-11-19\.\.2026-11-19\);/,
    );
    const after = await runJobProcess('score', [
      '--data-dir',
      loaded.dir,
      '--date',
      '2026-11-20',
      '--fail-if-nothing',
      '--json',
    ]);
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({
      ok: true,
      nothingToScore: null,
      runs: [{ date: '2026-11-20', users: 1 }],
    });
  });
});
