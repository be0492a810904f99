import { listValue } from '../src/db/duckdb.js';
import { pathsFor } from '../src/data-folder.js';
import { jobSettings } from '../src/job-settings.js';
import { AppStore, type App } from '../src/apps/store.js';
import {
  inTransaction,
  nextBatchId,
  openWarehouse,
  setWarehouseVersion,
  warehouseVersion,
  type Warehouse,
} from '../src/warehouse/warehouse.js';
import { query, run, runFile, runScript, sqlText } from '../src/db/sql.js';
import { publish } from '../src/publish/publish.js';
import { routeOptions } from '../src/warehouse/route-files.js';
import { scoreDate } from '../src/score/score-date.js';
import { markScoresAnnounced } from '../src/events/emit.js';
import { cityCentre } from '../src/generate/city.js';
import { addDays, datesBetween } from '../src/time.js';
import { silent, type Progress } from '../src/progress.js';

export interface SynthUser {
  orgUserId: string;
  platformUserId: number;
}

export interface SynthOptions {
  dataDir: string;
  users: SynthUser[];
  /** Last local day of history (inclusive). */
  endDate: string;
  days: number;
  seed?: number;
  now?: Date;
  progress?: Progress;
  /** Write the trips, events and statistics only, in one batch: no history scored, nothing published (a test of the scoring alone). */
  tripsOnly?: boolean;
}

export interface SynthResult {
  trips: number;
  events: number;
  userDays: number;
  /** Warehouse versions written: the older days, then the last day. */
  versions: number[];
  synthSeconds: number;
  publishSeconds: number;
}

/**
 * Writes `days` days of trips-only history (trips with their factor seconds, trip_events,
 * stats_daily from the real mart) for the users straight into the data folder's warehouse, then
 * publishes with the real publish (so every check in sql/checks runs on it).
 *
 * History goes in as two batches, all days but the last and then the last, each published: both
 * slots then hold the history and the standby one lags by one day, as after a nightly run, so the
 * next load's publish copies what a steady-state publish copies (one earlier day plus the new one)
 * instead of the whole history into a never-published slot.
 *
 * @example await synthesizeHistory({ dataDir, users, endDate: '2026-11-20', days: 89 });
 */
export async function synthesizeHistory(options: SynthOptions): Promise<SynthResult> {
  const progress = options.progress ?? silent;
  const now = options.now ?? new Date();
  const paths = pathsFor(options.dataDir);
  const settings = jobSettings();
  const app = onlyApp(await new AppStore(paths.appsFile).list());
  const result: SynthResult = { trips: 0, events: 0, userDays: 0, versions: [], synthSeconds: 0, publishSeconds: 0 };
  if (options.days < 1) return result;

  const wh = await openWarehouse(paths.warehouseFile, [app], { memoryLimit: settings.memoryLimit });
  try {
    await runScript(wh.conn, 'macros/bench');
    const centre = cityCentre(app.timeZone);
    await runFile(wh.conn, 'tools/bench/synth_users', {
      org_user_ids: listValue(options.users.map((u) => u.orgUserId)),
      platform_user_ids: listValue(options.users.map((u) => u.platformUserId)),
      seed: options.seed ?? 7,
      center_lat: centre.lat,
      center_lng: centre.lng,
    });
    const days = datesBetween(addDays(options.endDate, 1 - options.days), options.endDate);
    const batches = days.length > 1 && !options.tripsOnly ? [days.slice(0, -1), days.slice(-1)] : [days];
    for (const batch of batches) {
      const t0 = performance.now();
      const counts = await writeBatch(wh, app, batch, options.seed ?? 7, now);
      result.synthSeconds += (performance.now() - t0) / 1000;
      result.trips += counts.trips;
      result.events += counts.events;
      result.userDays += counts.userDays;
      result.versions.push(counts.version);
      progress(
        `bench: synthesized ${batch[0]} .. ${batch[batch.length - 1]}: ${counts.trips} trips, ${counts.events} events (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
      );
      if (options.tripsOnly) continue;
      if (batch !== batches[batches.length - 1]) await scoreHistory(wh, app, batch, now, progress);
      // the pack is written once, for the last batch: the history batch's would be replaced at once
      // with the route files of the history's versions, as the loads that wrote them would have
      // left them: else the next job's publish would write every one of them, a cost of the bench's
      // shortcut, not of that job
      const published = await publish(wh, {
        publishedDir: paths.publishedDir,
        manifestFile: paths.manifestFile,
        lockWaitMs: settings.publishLockWaitMs,
        now,
        servingPack: batch === batches[batches.length - 1],
        progress: (m) => progress(`bench: ${m}`),
        routes: routeOptions(paths, settings.pointsRetentionDays, now),
        settleRetired: true,
      });
      result.publishSeconds += published.seconds;
      progress(`bench: publish ${published.detail}`);
    }
    return result;
  } finally {
    wh.close();
  }
}

/**
 * The scores the nightly job would have left for each history day, by the real score step, so the
 * score job and the publish meet a warehouse holding 90 days of scores (about 180 rows per user)
 * instead of none. Like the history's trips they are not news: no safety_score.updated for them.
 */
async function scoreHistory(wh: Warehouse, app: App, days: string[], now: Date, progress: Progress): Promise<void> {
  const t0 = performance.now();
  let version = 0;
  for (const [i, day] of days.entries()) {
    // the nightly run of the next morning scores the windows ending with `day`
    version = (await scoreDate(wh, app.appId, addDays(day, 1), now)).version;
    if ((i + 1) % 10 === 0 || i === days.length - 1)
      progress(
        `bench: scored history ${i + 1}/${days.length} days (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
      );
  }
  await markScoresAnnounced(wh.conn, version);
}

interface BatchCounts {
  version: number;
  trips: number;
  events: number;
  userDays: number;
}

/** One batch of days in one transaction under one warehouse version, like one loaded file. */
async function writeBatch(wh: Warehouse, app: App, days: string[], seed: number, now: Date): Promise<BatchCounts> {
  const conn = wh.conn;
  const version = (await warehouseVersion(conn)) + 1;
  const batchId = await nextBatchId(conn);
  const source = `bench-history:${days[0]}..${days[days.length - 1]}`;
  const params = {
    app_id: app.appId,
    time_zone: app.timeZone,
    seed,
    version,
    batch_id: batchId,
    loaded_at: now.toISOString(),
    source_file: source,
    file_key: `bench-history-v${version}`,
  };
  return inTransaction(conn, async () => {
    for (const day of days) {
      await runFile(conn, 'tools/bench/synth_day_trips', { day, time_zone: app.timeZone, seed });
      await runScript(conn, 'tools/bench/insert_day', params);
    }
    await run(conn, 'drop table if exists synth_day_trips');
    const [counts = {}] = await query(
      conn,
      `select (select count(*) from trips where version = $version) as trips,
              (select count(*) from trip_events where version = $version) as events`,
      { version },
    );
    const report = JSON.stringify({
      synthesized: true,
      days: days.length,
      trips: Number(counts['trips']),
      events: Number(counts['events']),
    });
    await runScript(conn, 'tools/bench/finish_batch', { ...params, report });
    await run(conn, `insert into stats_daily by name\n${sqlText('models/marts/stats_daily')}`, { version });
    const [scope = {}] = await query(conn, 'select count(*) as n from scope_user_days');
    await run(conn, 'drop table scope_user_days');
    await setWarehouseVersion(conn, version);
    return { version, trips: Number(counts['trips']), events: Number(counts['events']), userDays: Number(scope['n']) };
  });
}

function onlyApp(apps: App[]): App {
  if (apps.length !== 1) throw new Error(`the bench data folder must hold exactly one app, found ${apps.length}`);
  return apps[0] as App;
}
