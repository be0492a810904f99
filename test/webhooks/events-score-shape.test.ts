import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { warehouseRows, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('America/New_York');
});
afterEach(() => ws.cleanup());
const now = new Date('2026-11-21T12:00:00Z');

function scoreEvents(): { id: string; data: Record<string, unknown> }[] {
  if (!existsSync(ws.paths.eventsDir)) return [];
  return readdirSync(ws.paths.eventsDir)
    .sort()
    .flatMap((f) =>
      readFileSync(join(ws.paths.eventsDir, f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    )
    .filter((e) => e.type === 'safety_score.updated');
}

// The event's id, fingerprint and intervals as one ordered aggregate per user gives them (the
// formulation sql/ops/events/safety_score_updated.sql replaced): a second implementation to agree with.
const ORDERED_AGGREGATES = `
  select
    'evt_' || md5('safety_score.updated|' || app_id || '|' || user_id || '|' || evaluation_date || '|1|' || fingerprint) as id,
    org_user_id, intervals::varchar as intervals
  from (
    select s.app_id, s.user_id, any_value(s.org_user_id) as org_user_id, s.evaluation_date,
      json_group_object(s.interval_days::varchar, json_object('safetyScore', round(s.safety_score, 2), 'tripCount', s.count_trips)) as intervals,
      md5(string_agg(concat_ws('|', s.interval_days, round(s.safety_score, 6), s.count_trips, round(s.distracted_driving, 6),
        round(s.evening_rush_hour, 6), round(s.acclong_abs_1, 6), round(s.weekday_driving, 6), round(s.low_speed, 6)),
        ';' order by s.interval_days)) as fingerprint
    from safety_scores as s
    group by s.app_id, s.user_id, s.evaluation_date
  )
  order by user_id`;

describe('safety_score.updated', () => {
  it('carries the intervals a user has a score for, with the ids and payloads ordered aggregates give', async () => {
    const trip = (id: string, user: number, start: string, seconds: number) =>
      tripRecord({ appId: ws.appId, tripId: id, userId: user, orgUserId: `d-${user}`, start, seconds });
    await runLoad({
      dataDir: ws.dir,
      now,
      inputs: [
        writeNdjson(join(ws.dir, 'in', '1.ndjson'), [
          // user 1: in both windows; user 2: only 31-90 days before the date (a 90-day score alone);
          // user 3: one trip in each part of the longer window
          trip('a', 1, '2026-11-19T08:00:00-05:00', 600),
          trip('b', 2, '2026-09-15T17:30:00-04:00', 900),
          trip('c', 3, '2026-09-01T08:00:00-04:00', 1200),
          trip('d', 3, '2026-11-20T18:00:00-05:00', 700),
        ]),
      ],
    });
    await runScore({ dataDir: ws.dir, date: '2026-11-21', now });

    const events = scoreEvents();
    expect(events.map((e) => [e.data['orgUserId'], Object.keys(e.data['intervals'] as object).sort()])).toEqual([
      ['d-1', ['30', '90']],
      ['d-2', ['90']],
      ['d-3', ['30', '90']],
    ]);
    expect(events[2]!.data['intervals']).toMatchObject({ '30': { tripCount: 1 }, '90': { tripCount: 2 } });
    const expected = await warehouseRows(ws.paths, ORDERED_AGGREGATES);
    expect(events.map((e) => ({ id: e.id, org_user_id: e.data['orgUserId'], intervals: e.data['intervals'] }))).toEqual(
      expected.map((r) => ({
        id: r['id'],
        org_user_id: r['org_user_id'],
        intervals: JSON.parse(String(r['intervals'])),
      })),
    );
  });
});
