import { AppStore } from '../src/apps/store.js';
import { PassportStore } from '../src/passport/store.js';
import { closeStates } from '../src/state/open.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { record, type BenchContext } from './context.js';
import { apiSnapshot, generate, parseResult } from './api-stage.js';
import { startCluster } from './cluster-server.js';
import { ensureBase } from './fixtures.js';

/** Tokens in the store (one per driver at most; the base's drivers in turn). */
const TOKENS = 3_000;
/** Timed lookups of random existing tokens, one after another. */
const LOOKUPS = 20_000;
/** Untimed lookups first (statements prepared, pages read). */
const WARM_LOOKUPS = 2_000;
/** End to end: `GET /v1/token/{token}` (an API key check, then the token's lookup) at this rate. */
const HTTP_RATE = 200;
const HTTP_PATHS = 2_000;
const DAY_MS = 86_400_000;

/**
 * Tokens: the passport token lookup (`PassportStore.tokenOwner`, what every passport-authenticated
 * request does) in the embedded SQLite store and in PostgreSQL (a real server of the bench's own
 * on a free loopback port, test/helpers/postgres.ts): random existing tokens one after another,
 * each timed; then end to end through `serve.js` (`GET /v1/token/{token}`, which checks the API key
 * and looks the token up) on each store.
 */
export async function benchTokens(ctx: BenchContext): Promise<void> {
  const base = await ensureBase(ctx);
  const snapshot = await apiSnapshot(ctx);
  const pg = await startPostgres();
  try {
    const pgUrl = await pg.database();
    for (const [name, databaseUrl] of [
      ['SQLite (embedded, WAL)', null],
      ['PostgreSQL 15 (loopback, fsync off)', pgUrl],
    ] as const) {
      const location = { dataDir: snapshot.dir, databaseUrl };
      // the snapshot's SQLite state holds the base app; PostgreSQL starts empty and gets an app of its own
      const app =
        databaseUrl === null
          ? { appId: base.appId, apiKey: base.apiKey }
          : await new AppStore(location).add({ name: 'Bench Tokens', timeZone: base.timeZone });
      const passport = await PassportStore.open(location);
      const now = new Date();
      const tokens: { token: string; platformUserId: number }[] = [];
      const issueStart = performance.now();
      for (let i = 0; i < TOKENS; i++)
        tokens.push(
          await passport.issueToken(app.appId, base.users[i % base.users.length]?.orgUserId as string, now, DAY_MS),
        );
      const issueMs = (performance.now() - issueStart) / TOKENS;
      const random = lcg(ctx.options.seed);
      const pick = () => tokens[Math.floor(random() * tokens.length)] as { token: string; platformUserId: number };
      const lookup = async (): Promise<number> => {
        const t = pick();
        const started = performance.now();
        const owner = await passport.tokenOwner(t.token, now);
        const ms = performance.now() - started;
        if (owner?.platformUserId !== t.platformUserId || owner.appId !== app.appId)
          throw new Error(`${name}: a token issued to ${t.platformUserId} resolved to ${JSON.stringify(owner)}`);
        return ms;
      };
      for (let i = 0; i < WARM_LOOKUPS; i++) await lookup();
      const times: number[] = [];
      for (let i = 0; i < LOOKUPS; i++) times.push(await lookup());
      await closeStates();
      times.sort((a, b) => a - b);
      const at = (q: number): number => times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
      record(ctx, {
        stage: 'tokens',
        metric: `${name}: token lookup in the bench's process, ${LOOKUPS.toLocaleString('en-US')} random of ${TOKENS.toLocaleString('en-US')} tokens one after another: p50 / p99 / max`,
        value: `${at(0.5).toFixed(3)} / ${at(0.99).toFixed(3)} / ${(times[times.length - 1] as number).toFixed(1)} ms`,
        unit: '',
      });
      record(ctx, {
        stage: 'tokens',
        metric: `${name}: token issue (a transaction: account, token hash), mean of ${TOKENS.toLocaleString('en-US')}`,
        value: Math.round(issueMs * 1000) / 1000,
        unit: 'ms',
      });

      const server = await startCluster(ctx, snapshot.dir, 1, {
        args: databaseUrl === null ? [] : ['--database-url', databaseUrl],
      });
      try {
        const paths = Array.from({ length: HTTP_PATHS }, () => `/v1/token/${pick().token}`);
        const r = parseResult(
          await generate(ctx, {
            url: server.url,
            apiKey: app.apiKey,
            paths,
            rate: HTTP_RATE,
            seconds: ctx.options.sizes.apiSeconds,
            connections: 50,
            warmupSeconds: 2,
          }).done,
        );
        const failed = r.errors + r.timeouts + r.non2xx;
        record(ctx, {
          stage: 'tokens',
          metric: `${name}: GET /v1/token/{token} through serve.js --workers 1 @ ${HTTP_RATE}/s: p50 / p99 (failed)`,
          value: `${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)} ms (${failed}${
            failed > 0
              ? `: ${Object.entries(r.failureKinds)
                  .map(([kind, n]) => `${n} × ${kind}`)
                  .join(', ')}`
              : ''
          })`,
          unit: '',
        });
      } finally {
        ctx.children.push(await server.stop());
      }
    }
  } finally {
    await closeStates();
    await pg.stop();
  }
}

/** A seeded uniform generator in [0, 1) (the same tokens are asked in every run). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}
