// load.js as a real process: it says what it does from its first line (the warehouse it opens)
// and its summary ends with what it set aside, by reason, counted by hand from the input below.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { badEvents, tripRecord } from '../helpers/trips.js';
import { workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { runJobProcess } from '../helpers/job-process.js';

let ws: Workspace;
let file = '';

/** The input: its counts by reason worked out by hand below. */
function corpus(ws: Workspace): string {
  const good = (id: string, extra: Record<string, unknown> = {}) =>
    tripRecord({ appId: ws.appId, tripId: id, start: '2026-11-19T08:00:00Z', seconds: 120, extra });
  const withBadEvents = { ...good('ok-2'), events: badEvents() };
  const badPoint = good('ok-3');
  const points = badPoint['points'] as { t: number; lat: number; lng: number; speed: number }[];
  points.push({ t: (points.at(-1) as { t: number }).t + 500, lat: 52.6, lng: 13.4, speed: -1 });
  // rejected: not_an_object 2, invalid_json 1, invalid_os 1; events: unknown_event_type 1,
  // event_time_inverted 1; points: negative_speed 1
  return writeNdjson(join(ws.dir, 'in', 'corpus.ndjson'), [
    good('ok-1'),
    '{"appId": "truncated',
    '[1, 2]',
    '[3]',
    good('x1', { os: 'windows' }),
    withBadEvents,
    badPoint,
  ]);
}

beforeAll(async () => {
  ws = await workspace('UTC');
  file = corpus(ws);
});

afterAll(() => ws.cleanup());

describe('load.js progress and summary', () => {
  it('names the warehouse it opens first, then the files, and ends with the reasons and their counts', async () => {
    const r = await runJobProcess('load', ['--input', file, '--data-dir', ws.dir]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.replace(/^\d\d:\d\d:\d\d /, ''));
    // on a slow machine a step that lasts 5 s is named again: such a line repeats the step before it
    const again = / \(\d+ s so far\)$/;
    for (const line of lines.filter((l) => again.test(l)))
      expect(line).toMatch(/^load: (opening|putting|listing|deriving|pruning|purging|publishing|writing) /);
    const said = lines.filter((l) => !again.test(l));
    // the first line comes before DuckDB and the job's code are loaded
    expect(said[0]).toBe("load: starting (loading DuckDB and the job's code)");
    expect(said[1]).toBe(`load: opening the warehouse ${ws.paths.warehouseFile} (schema, macros, 1 app(s))`);
    expect(said[2]).toMatch(/^load: warehouse open in \d+\.\d s$/);
    expect(said[3]).toBe('load: 1 file(s) given');
    expect(said[4]).toMatch(/^load: \[1\/1\] .*corpus.ndjson: 3 trips \(0 replaced\), 4 rejected, /);
    const summary = r.stdout.split('\n');
    expect(summary[0]).toMatch(
      /^load: 1 file\(s\) loaded, 0 skipped, 0 failed; 3 trips \(0 replaced, \d+ abnormal\), 4 records rejected, 1 points dropped, 2 events quarantined; published version 1 /,
    );
    expect(summary.slice(1)).toEqual([
      '  records rejected: not_an_object 2, invalid_json 1, invalid_os 1 (node jobs/quarantine.js lists them, with file and line)',
      '  events quarantined: event_time_inverted 1, unknown_event_type 1 (their trips kept)',
      '  points dropped: negative_speed 1',
      '',
    ]);
  });

  it('gives the same reasons in --json', async () => {
    // the same file again: skipped, nothing set aside
    const again = await runJobProcess('load', ['--input', file, '--data-dir', ws.dir, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, reasons: [] });
    const other = await workspace('UTC');
    const r = await runJobProcess('load', ['--input', corpus(other), '--data-dir', other.dir, '--json']);
    other.cleanup();
    expect(JSON.parse(r.stdout).reasons).toEqual([
      { kind: 'record', reason: 'not_an_object', count: 2 },
      { kind: 'record', reason: 'invalid_json', count: 1 },
      { kind: 'record', reason: 'invalid_os', count: 1 },
      { kind: 'event', reason: 'event_time_inverted', count: 1 },
      { kind: 'event', reason: 'unknown_event_type', count: 1 },
      { kind: 'point', reason: 'negative_speed', count: 1 },
    ]);
  });
});
