import { listValue } from '../db/duckdb.js';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { openDatabase } from '../db/open.js';
import { type Params, queryFile, runFile, runScript } from '../db/sql.js';
import { addDays, datesBetween } from '../time.js';
import { writeBadRecords } from './bad-records.js';
import { checkOptions } from './check-options.js';
import { cityCentre } from './city.js';
import type { GenerateOptions, GenerateSummary, TripRecord } from './types.js';
import { buildRecords, tripRanges } from './records.js';
import { writeDayFiles } from './write-days.js';

export type { GeneratedUser, GenerateOptions, GenerateSummary } from './types.js';

/** Tables built in order; each file reads the ones before it. */
const STEPS = ['users', 'trips', 'legs', 'points', 'events'] as const;

/**
 * Generates realistic trip records (docs/decisions.md, Trip records (load)) for users over local days, set-based in DuckDB:
 * the same options give byte-identical files.
 *
 * @example
 * const summary = await generateTrips({ outDir: 'data/in', appId: 'demo', timeZone: 'Europe/Berlin',
 *   users: [{ orgUserId: 'u1', platformUserId: 7301 }], days: 14, endDate: '2026-11-20', seed: 1,
 *   format: 'ndjson', badRecords: false });
 */
export async function generateTrips(options: GenerateOptions): Promise<GenerateSummary> {
  checkOptions(options);
  const outDir = resolve(options.outDir);
  mkdirSync(outDir, { recursive: true });
  const progress = options.onProgress ?? (() => {});
  const centre = cityCentre(options.timeZone);
  const params: Params = {
    org_user_ids: listValue(options.users.map((u) => u.orgUserId)),
    platform_user_ids: listValue(options.users.map((u) => u.platformUserId)),
    seed: options.seed,
    center_lat: centre.lat,
    center_lng: centre.lng,
    end_date: options.endDate,
    days: options.days,
    time_zone: options.timeZone,
    bad_records: options.badRecords,
    app_id: options.appId,
  };

  const db = await openDatabase(':memory:');
  try {
    const conn = db.connection;
    await runScript(conn, 'generate/macros');
    for (const step of STEPS) {
      await runFile(conn, `generate/${step}`, params);
      progress(`built ${step}`);
    }
    const days = datesBetween(addDays(options.endDate, 1 - options.days), options.endDate);
    const ranges = await tripRanges(conn);
    const files = await writeDayFiles(conn, { ...options, outDir, days, ranges, onProgress: progress });
    const [totals = {}] = await queryFile(conn, 'generate/summary');
    const summary: GenerateSummary = {
      files,
      trips: Number(totals['trips']),
      points: Number(totals['points']),
      events: Number(totals['events']),
      abnormalTrips: Number(totals['abnormal_trips']),
      badLines: 0,
      badByReason: {},
      droppedPointsByReason: {},
      quarantinedEventsByReason: {},
    };
    if (!options.badRecords) return summary;

    await buildRecords(conn, ranges.get(null), options);
    const sources = await queryFile(conn, 'generate/bad_sources');
    const bad = writeBadRecords(outDir, sources.map((row) => JSON.parse(String(row['line'])) as TripRecord));
    progress(`wrote ${bad.path}`);
    return {
      files: [...files, bad.path],
      trips: summary.trips + bad.trips,
      points: summary.points + bad.points,
      events: summary.events + bad.events,
      abnormalTrips: summary.abnormalTrips,
      badLines: bad.badLines,
      badByReason: bad.badByReason,
      droppedPointsByReason: bad.droppedPointsByReason,
      quarantinedEventsByReason: bad.quarantinedEventsByReason,
    };
  } finally {
    db.close();
  }
}
