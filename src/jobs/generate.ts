import { resolve } from 'node:path';
import { pathsFor } from '../data-folder.js';
import type { App } from '../apps/store.js';
import { appsOf } from './data-dir.js';
import { PassportStore } from '../passport/store.js';
import { generateTrips, type GenerateSummary } from '../generate/generate.js';
import { InputError } from '../errors.js';
import { silent, type Progress } from '../progress.js';
import { addDays, isDate, todayIn } from '../time.js';

export interface GenerateJobOptions {
  dataDir: string;
  out?: string;
  users: number;
  days: number;
  seed?: number;
  format?: 'ndjson' | 'parquet';
  badRecords?: boolean;
  appId?: string;
  endDate?: string;
  now?: Date;
  progress?: Progress;
}

/**
 * The generate job: makes the users real passport accounts (so every endpoint answers for them),
 * then writes their trips for the `days` days up to yesterday (app zone) into the landing area.
 */
export async function runGenerate(
  options: GenerateJobOptions,
): Promise<GenerateSummary & { appId: string; out: string }> {
  const paths = pathsFor(options.dataDir);
  const app = pickApp(await appsOf(options.dataDir), options.appId, paths.appsFile);
  if (!Number.isInteger(options.users) || options.users < 1 || options.users > 1_000_000)
    throw new InputError('--users must be an integer from 1 to 1000000');
  if (!Number.isInteger(options.days) || options.days < 1 || options.days > 1000)
    throw new InputError('--days must be an integer from 1 to 1000');
  if (options.endDate !== undefined && !isDate(options.endDate))
    throw new InputError(`--end-date must be YYYY-MM-DD, got '${options.endDate}'`);
  // the load rejects record times in the future (time_out_of_range), so such data could never load
  const today = todayIn(app.timeZone, options.now ?? new Date());
  if (options.endDate !== undefined && options.endDate > today)
    throw new InputError(
      `--end-date ${options.endDate} is after today (${today} in ${app.timeZone}): future trips would be rejected at load`,
    );
  const progress = options.progress ?? silent;
  const out = resolve(options.out ?? paths.landingDir);
  const orgUserIds = Array.from({ length: options.users }, (_, i) => `driver-${String(i + 1).padStart(5, '0')}`);

  progress(`generate: ensuring ${orgUserIds.length} passport account(s) for ${app.appId}`);
  // the state store is shared: this works while the API serves
  const accounts = await PassportStore.ensureAccountsIn(paths.passportFile, app.appId, orgUserIds);
  const endDate = options.endDate ?? addDays(today, -1);
  progress(`generate: ${options.users} user(s) x ${options.days} day(s) up to ${endDate} into ${out}`);
  const summary = await generateTrips({
    outDir: out,
    appId: app.appId,
    timeZone: app.timeZone,
    users: orgUserIds.map((orgUserId) => ({ orgUserId, platformUserId: accounts.get(orgUserId) as number })),
    days: options.days,
    endDate,
    seed: options.seed ?? 42,
    format: options.format ?? 'ndjson',
    badRecords: options.badRecords ?? false,
    onProgress: (m) => progress(`generate: ${m}`),
  });
  return { ...summary, appId: app.appId, out };
}

function pickApp(apps: App[], appId: string | undefined, file: string): App {
  if (appId !== undefined) {
    const app = apps.find((a) => a.appId === appId);
    if (!app) throw new InputError(`--app-id ${appId}: no such app in ${file}`);
    return app;
  }
  if (apps.length === 1) return apps[0] as App;
  throw new InputError(`${apps.length} apps exist: say which with --app-id`);
}
