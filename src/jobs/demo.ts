import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../data-folder.js';
import { AppStore } from '../apps/store.js';
import { writeFileAtomic } from '../fsutil.js';
import { runGenerate } from './generate.js';
import { runLoad, type LoadResult } from './load.js';
import { runScore, type ScoreResult } from './score.js';
import { openDatabase } from '../db/open.js';
import { queryFile } from '../db/sql.js';
import { readManifest } from '../publish/manifest.js';
import { silent, type Progress } from '../progress.js';
import { addDays, todayIn } from '../time.js';

export interface DemoOptions {
  dataDir: string;
  users?: number;
  days?: number;
  progress?: Progress;
  /** Show the scoring's progress as one line updating in place (stderr is a terminal). */
  tty?: boolean;
  now?: Date;
}

export interface DemoResult {
  appId: string;
  apiKey: string;
  credentialsFile: string;
  generated: boolean;
  load: LoadResult;
  score: ScoreResult;
  published: PublishedSummary;
}

export interface PublishedSummary {
  slot: string;
  version: number;
  trips: number;
  normalTrips: number;
  users: number;
  firstDay: string | null;
  lastDay: string | null;
  scores: number;
  meanSafetyScore30: number | null;
  sampleUsers: string[];
}

const DEMO_NAME = 'Demo Fleet';
const DEMO_ZONE = 'Europe/Berlin';

/**
 * `npm start`: a demo app (created once; its credentials kept in <data-dir>/demo-credentials.json
 * because a key is shown only once), 50 users x 30 days of trips, load, a score as of every day of
 * that history (so the score history has a point a day), publish. Running it again reuses
 * everything and only catches up: it scores the days since the last scored one.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const progress = options.progress ?? silent;
  const paths = pathsFor(options.dataDir);
  const credentialsFile = join(options.dataDir, 'demo-credentials.json');
  const store = new AppStore(paths.appsFile);
  let credentials = existsSync(credentialsFile)
    ? (JSON.parse(readFileSync(credentialsFile, 'utf8')) as { appId: string; apiKey: string; appSecret: string })
    : null;
  if (!credentials || !(await store.get(credentials.appId))) {
    credentials = await store.add({ name: DEMO_NAME, timeZone: DEMO_ZONE });
    writeFileAtomic(credentialsFile, `${JSON.stringify(credentials, null, 2)}\n`);
    progress(`demo: created app ${credentials.appId} (credentials in ${credentialsFile})`);
  }
  const alreadyLoaded = readManifest(paths.manifestFile) !== null;
  if (!alreadyLoaded) {
    await runGenerate({
      dataDir: options.dataDir,
      appId: credentials.appId,
      users: options.users ?? 50,
      days: options.days ?? 30,
      progress,
    });
  }
  const load = await runLoad({ dataDir: options.dataDir, progress });
  const now = options.now ?? new Date();
  const dates = await datesToScore(paths.manifestFile, paths.publishedDir, credentials.appId, todayIn(DEMO_ZONE, now));
  progress(
    dates.from === dates.to
      ? `demo: scoring as of ${dates.to}`
      : `demo: scoring as of each day from ${dates.from} to ${dates.to}`,
  );
  const score = await runScore({
    dataDir: options.dataDir,
    ...(dates.from === dates.to ? { date: dates.to } : dates),
    yes: true,
    now,
    tty: options.tty ?? false,
    progress,
  });
  return {
    appId: credentials.appId,
    apiKey: credentials.apiKey,
    credentialsFile,
    generated: !alreadyLoaded,
    load,
    score,
    published: await summarizePublished(paths.manifestFile, paths.publishedDir, credentials.appId),
  };
}

/**
 * The evaluation dates the demo scores: from the day after its first trip (the first date whose
 * window holds a trip), or after the last date already scored, to today; today alone when that is
 * all there is to catch up.
 */
export async function datesToScore(
  manifestFile: string,
  publishedDir: string,
  appId: string,
  today: string,
): Promise<{ from: string; to: string }> {
  const manifest = readManifest(manifestFile);
  if (!manifest) return { from: today, to: today };
  const db = await openDatabase(join(publishedDir, manifest.file), { readOnly: true });
  try {
    const [row = {}] = await queryFile(db.connection, 'ops/demo/dates_to_score', { app: appId });
    const firstDay = row['first_day'] as string | null;
    const lastScored = row['last_scored'] as string | null;
    const from = lastScored !== null ? addDays(lastScored, 1) : firstDay !== null ? addDays(firstDay, 1) : today;
    return { from: from < today ? from : today, to: today };
  } finally {
    db.close();
  }
}

/** What the API will serve, read from the published slot the way the API will read it. */
export async function summarizePublished(
  manifestFile: string,
  publishedDir: string,
  appId: string,
): Promise<PublishedSummary> {
  const manifest = readManifest(manifestFile);
  if (!manifest) throw new Error('nothing published');
  const db = await openDatabase(join(publishedDir, manifest.file), { readOnly: true });
  try {
    const [row = {}] = await queryFile(db.connection, 'ops/demo/published_summary', { app: appId });
    const sample = await queryFile(db.connection, 'ops/demo/sample_users', { app: appId });
    return {
      slot: manifest.slot,
      version: manifest.version,
      trips: Number(row['trips']),
      normalTrips: Number(row['normal_trips']),
      users: Number(row['users']),
      firstDay: (row['first_day'] as string | null) ?? null,
      lastDay: (row['last_day'] as string | null) ?? null,
      scores: Number(row['scores']),
      meanSafetyScore30: row['mean30'] === null ? null : Number(row['mean30']),
      sampleUsers: sample.map((r) => String(r['org_user_id'])),
    };
  } finally {
    db.close();
  }
}
