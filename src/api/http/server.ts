import { dirname, join } from 'node:path';
import type { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { pathsFor } from '../../data-folder.js';
import { setting } from '../../settings.js';
import { LandingCounter } from '../../landing-status.js';
import { diskSpace } from '../../disk-space.js';
import { openState, resolveDatabaseUrl } from '../../state/open.js';
import { queueBacklog, queueSink } from '../../intake/sink.js';
import { uploadsWaitingMetrics } from '../../metrics/uploads-waiting.js';
import { cursorKey } from '../../state/cursor-key.js';
import { PassportStore } from '../../passport/store.js';
import type { CellServing, CellsServed } from '../read/cells.js';
import { cellFolder } from '../../cell.js';
import { AccountDeletion } from '../../passport/deletion.js';
import { AppsCache } from '../read/apps-cache.js';
import { AppStore } from '../../apps/store.js';
import { rateFileOf, sharedRateStore } from './rate-store.js';
import { buildApp } from './app.js';
import { ApiLines } from './log.js';
import type { ApiContext } from './context.js';
import { CursorCodec } from '../read/cursor.js';
import { SnapshotFollower } from '../read/snapshot.js';
import { apiLimits, type ApiLimits } from './limits.js';
import { WebhookService } from '../../webhooks/integrator.js';
import { deliverySettings, type DeliverySettings } from '../../webhooks/delivery-settings.js';
import type { Registry } from 'prom-client';
import { ApiMetrics } from '../../metrics/api.js';
import { followMetrics } from '../../metrics/follow.js';
import { readFollowStatus } from '../../follow/status.js';

export interface ServerOptions {
  dataDir: string;
  logger?: boolean;
  connections?: number;
  pollMs?: number;
  /** Answer the trip list, detail, statistics and score from the serving pack when there is one (default), or always by SQL. */
  serving?: 'pack' | 'sql';
  /** How a trip detail reads its events from the pack (src/serving/section-file.ts, SectionFile.extra()). */
  extrasReads?: 'sync' | 'async';
  /** What is read into the page cache when a snapshot opens (src/serving/warm.ts); default rows. */
  packWarm?: 'rows' | 'all' | 'none';
  now?: () => Date;
  /** Limits over those of the environment (DRIVING_API_*, src/api/http/limits.ts). */
  limits?: Partial<ApiLimits>;
  /** Webhook settings over those of the environment (DRIVING_WEBHOOK_*): the loopback switch, the timeout. */
  webhookSettings?: Partial<DeliverySettings>;
  /** The registry the API's series are kept in (src/metrics/api.ts); none: not measured. */
  metrics?: Registry;
  /** The shared state store: PostgreSQL at this URL; default DATABASE_URL, else the data folder's SQLite. */
  databaseUrl?: string | null;
  /** Count rate limits in Redis at this URL (every process on every machine). */
  redisUrl?: string | null;
  /** An API machine: the job machine's data folder this machine's follower copies publishes from (serve.js --follow). */
  follow?: string | null;
  /**
   * The cells this machine follows (serve.js --follow NAME=SOURCE, repeated), each copied into
   * `<data-dir>/cells/NAME/`; or, on a cell's job machine (serve.js --cell NAME), its own cell.
   */
  cells?: { followed: string[] } | { own: string } | null;
  /** Count them in a file this many workers of the machine share (a cluster worker does; 0: in this process); with Redis, while it does not answer. */
  sharedRateLimits?: number;
}

/** How often expired passport tokens are removed from the state store. */
const TOKEN_SWEEP_MS = 10 * 60_000;

/** Opens the shared state store (apps, passport) and follows what it reads (published snapshots). */
export async function createApi(
  options: ServerOptions,
): Promise<{ app: FastifyInstance; ctx: ApiContext; close(): Promise<void> }> {
  const paths = pathsFor(options.dataDir);
  const location = {
    dataDir: options.dataDir,
    ...(options.databaseUrl !== undefined ? { databaseUrl: options.databaseUrl } : {}),
  };
  const passport = await PassportStore.open(location);
  // the API's own lines, through the app's logger once it is built (./log.ts)
  const lines = new ApiLines();
  const log = lines.info;
  const deletion = new AccountDeletion(passport);
  const now = options.now ?? (() => new Date());
  // ioredis is loaded only when rate limits are counted in Redis: loading it would cost every API
  // start CPU for nothing without Redis
  const redis = options.redisUrl
    ? new (await import('ioredis')).Redis(options.redisUrl, {
        connectTimeout: 2_000,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
      })
    : null;
  // without Redis the machine's workers count together; with it, this store counts while Redis is down
  const rateStore = options.sharedRateLimits
    ? sharedRateStore(rateFileOf(options.dataDir), { processes: options.sharedRateLimits })
    : null;
  // ioredis reconnects by itself; its errors are said once an outage by the store (weighted-redis-store.ts)
  redis?.on('error', () => undefined);
  // the first requests count in Redis like the rest: a process that served before its connection was
  // ready counted them on its own (a limit per process for those), so the API opens once Redis
  // answers, or after DRIVING_REDIS_START_WAIT_MS, counting on this machine until it does (awaited
  // below, once the snapshot is open: the two waits overlap)
  const redisReady = redis ? readyWithin(redis, setting('DRIVING_REDIS_START_WAIT_MS')) : null;
  let rateLimitsLocal = false;
  const sweep = setInterval(() => void passport.sweepTokens(now()).catch(() => undefined), TOKEN_SWEEP_MS);
  sweep.unref();
  const follower = (dir: { publishedDir: string; manifestFile: string }) =>
    new SnapshotFollower(dir.publishedDir, dir.manifestFile, {
      connections: options.connections ?? 4,
      pollMs: options.pollMs ?? 250,
      usePack: (options.serving ?? 'pack') === 'pack',
      pack: { extrasReads: options.extrasReads ?? 'sync', warm: options.packWarm ?? 'rows', log },
      log,
      onWarm: (m, w) => {
        const mb = `${(w.readBytes / 1e6).toFixed(1)} MB`;
        const what =
          w.state === 'warm' ? `${mb} in ${w.seconds} s` : `${w.state} after ${mb}${w.error ? `: ${w.error}` : ''}`;
        lines.info(`serve: page cache for ${m.slot}@${m.version}: ${what}`);
      },
      onError: (error) =>
        lines.error(
          `serve: cannot open the published snapshot: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        ),
    });
  const cells = await cellsServed(options, follower);
  const snapshots = cells ? cells.fallback.snapshots : follower(paths);
  if (!cells) await snapshots.start();
  const landing = new LandingCounter(paths.landingDir);
  const uploadsUrl = options.databaseUrl !== undefined ? options.databaseUrl : resolveDatabaseUrl();
  const ctx: ApiContext = {
    apps: new AppsCache(new AppStore(location)),
    passport,
    deletion,
    snapshots,
    cursors: new CursorCodec(
      await cursorKey(await openState(location), join(dirname(paths.passportFile), 'cursor.key')),
    ),
    landingDir: paths.landingDir,
    landing,
    routesDir: paths.routesDir,
    now,
    pointsRetentionDays: setting('DRIVING_POINTS_RETENTION_DAYS'),
    limits: apiLimits(undefined, options.limits),
    webhooks: new WebhookService(
      options.dataDir,
      { ...deliverySettings(), ...options.webhookSettings },
      undefined,
      options.databaseUrl,
    ),
    rateCounting: redis
      ? {
          redis,
          ...(rateStore ? { fallback: rateStore } : {}),
          log,
          onMove: (local) => {
            rateLimitsLocal = local;
          },
        }
      : rateStore
        ? { store: rateStore }
        : null,
    uploads: uploadsUrl ? queueSink(uploadsUrl) : null,
    cells,
    cellRouter: setting('DRIVING_CELL_ROUTER'),
    follow: options.follow ? { source: options.follow, status: () => readFollowStatus(options.dataDir) } : null,
  };
  if (options.metrics && options.follow)
    followMetrics(
      options.metrics,
      () => readFollowStatus(options.dataDir),
      () => snapshots.manifest?.version ?? null,
      now,
    );
  // the uploads waiting for the job machine, on every machine's /metrics (src/metrics/uploads-waiting.ts)
  if (options.metrics && uploadsUrl) uploadsWaitingMetrics(options.metrics, () => queueBacklog(uploadsUrl));
  const app = buildApp(ctx, {
    logger: options.logger,
    metrics:
      options.metrics &&
      new ApiMetrics(
        options.metrics,
        snapshots,
        now,
        () => rateLimitsLocal,
        () => landing.read(),
        () => diskSpace(paths.landingDir, ctx.limits.sdkBodyLimitBytes),
      ),
  });
  lines.attach(app.log);
  app.addHook('onClose', async () => void redis?.disconnect());
  await redisReady;
  return {
    app,
    ctx,
    async close() {
      clearInterval(sweep);
      await app.close();
      if (cells) for (const c of cells.byName.values()) c.snapshots.stop();
      else snapshots.stop();
      passport.close();
      ctx.webhooks.close();
      rateStore?.close();
    },
  };
}

/** Resolves once `redis` is ready (true) or after `ms` (false), whichever comes first. */
function readyWithin(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean): void => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ready);
    };
    const onReady = (): void => done(true);
    const timer = setTimeout(() => done(false), ms);
    redis.once('ready', onReady);
  });
}

/**
 * The cells this process serves and their snapshots (src/api/read/cells.ts): each followed cell
 * from its copy in `<data-dir>/cells/NAME/`, or the job machine's own cell from its data folder;
 * null without cells.
 */
async function cellsServed(
  options: ServerOptions,
  follower: (dir: { publishedDir: string; manifestFile: string }) => SnapshotFollower,
): Promise<CellsServed | null> {
  const cells = options.cells;
  if (!cells) return null;
  const folders =
    'followed' in cells
      ? cells.followed.map((name) => [name, pathsFor(cellFolder(options.dataDir, name))] as const)
      : [[cells.own, pathsFor(options.dataDir)] as const];
  const byName = new Map<string, CellServing>();
  for (const [name, paths] of folders) {
    const snapshots = follower(paths);
    await snapshots.start();
    byName.set(name, { snapshots, routesDir: paths.routesDir });
  }
  return { byName, fallback: byName.get(folders[0]?.[0] ?? '') as CellServing };
}
