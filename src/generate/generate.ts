import { listValue } from '../db/duckdb.js';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openDatabase } from '../db/open.js';
import { type Params, queryFile, quoteLiteral, run, runFile, runScript, sqlWith } from '../db/sql.js';
import { setting } from '../settings.js';
import { addDays, datesBetween } from '../time.js';
import { writeBadRecords } from './bad-records.js';
import { checkOptions } from './check-options.js';
import { cityCentre } from './city.js';
import type { GenerateOptions, GenerateSummary, TripRecord } from './types.js';
import { writeDayFiles } from './write-days.js';

export type { GeneratedUser, GenerateOptions, GenerateSummary } from './types.js';

/**
 * Trips built and written at a time (env DRIVING_GENERATE_PART_TRIPS): about 1,300 points each,
 * so the default part is about 0.33 M points. A day's share of a part is sorted whole by the
 * COPY that writes it, beside the part's points, so a part is kept small enough for that sort to
 * fit within the generator's 512 MB cap: at 1,000 trips a part it did not, and the run failed with
 * DuckDB's Out of Memory (docs/benchmarks.md, generate).
 */
const tripsPerPart = (): number => setting('DRIVING_GENERATE_PART_TRIPS');

/**
 * DuckDB's memory cap for the generator (env DRIVING_GENERATE_MEMORY_LIMIT). Without one DuckDB
 * may keep up to 80 % of the machine's memory, and did: the peak grew with the number of parts
 * written (users x days), not with the part. Beyond the cap it spills to a scratch folder.
 */
const memoryLimit = (): string => setting('DRIVING_GENERATE_MEMORY_LIMIT');

/**
 * Generates realistic trip records (docs/decisions.md, Trip records (load)) for users over local days, set-based in DuckDB:
 * the same options give byte-identical files. Day by day and a part of a day's trips at a time
 * (src/generate/write-days.ts): memory follows the part, whatever the users and days.
 *
 * @example
 * const summary = await generateTrips({ outDir: 'data/in', appId: 'demo', timeZone: 'Europe/Berlin',
 *   users: [{ orgUserId: 'u1', platformUserId: 7301 }], days: 14, endDate: yesterday, seed: 1,
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

  const db = await openDatabase(':memory:', { memoryLimit: memoryLimit() });
  // spills go beside the output, removed at the end (DuckDB's default is ./.tmp of the caller)
  const scratch = join(outDir, `.generate-tmp-${process.pid}`);
  try {
    const conn = db.connection;
    await run(conn, sqlWith('tools/generate/temp_directory', { dir: quoteLiteral(scratch) }));
    await runScript(conn, 'macros/generate');
    await runFile(conn, 'tools/generate/users', params);
    progress('built users');
    const days = datesBetween(addDays(options.endDate, 1 - options.days), options.endDate);
    const written = await writeDayFiles(conn, {
      ...options,
      outDir,
      days,
      params,
      users: options.users.length,
      tripsPerPart: options.tripsPerPart ?? tripsPerPart(),
      onProgress: progress,
    });
    const summary: GenerateSummary = {
      files: written.files,
      trips: written.trips,
      points: written.points,
      events: written.events,
      abnormalTrips: written.abnormalTrips,
      badLines: 0,
      badByReason: {},
      droppedPointsByReason: {},
      quarantinedEventsByReason: {},
    };
    if (!options.badRecords) return summary;

    // the last day's bad-source trips: their records are in gen_records (write-days.ts)
    const sources = await queryFile(conn, 'tools/generate/bad_sources');
    const bad = writeBadRecords(
      outDir,
      sources.map((row) => JSON.parse(String(row['line'])) as TripRecord),
    );
    progress(`wrote ${bad.path}`);
    return {
      files: [...written.files, bad.path],
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
    rmSync(scratch, { recursive: true, force: true });
  }
}
