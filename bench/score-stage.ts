import { cpSync } from 'node:fs';
import { childOptions, jobScript, record, type BenchContext, type Snapshot } from './context.js';
import { jobJson, runNodeChild } from './child.js';
import { historyDir } from './fixtures.js';

/** Target: the nightly score of every user over 90 days of history under 60 s. */
const MAX_SECONDS = 60;

/**
 * Score: the real `score.js --date D+1` (30- and 90-day windows ending with day D, then publish) on
 * H days of history: the growth stage's last folder when it ran, else a synthesized one.
 */
export async function benchScore(ctx: BenchContext): Promise<void> {
  const snapshot = await historySnapshot(ctx);
  // kept as the score run finds it, to time score runs again on copies of it (old and new code)
  if (ctx.options.keep) cpSync(snapshot.dir, `${snapshot.dir}-before-score`, { recursive: true });
  const run = await runNodeChild('score', jobScript(ctx, 'score'), ['--data-dir', snapshot.dir, '--date', ctx.scoreDate, '--json'], childOptions(ctx));
  ctx.children.push(run);
  const result = jobJson(run);
  const users = (result['runs'] as { users: number }[]).reduce((sum, r) => sum + r.users, 0);
  const publishSeconds = (result['publish'] as { seconds: number }).seconds;
  record(ctx, {
    stage: 'score',
    metric: `score.js --date ${ctx.scoreDate} (${users.toLocaleString('en-US')} users, ${snapshot.trips.toLocaleString('en-US')} trips)`,
    value: run.wallSeconds,
    unit: 's',
    target: `< ${MAX_SECONDS} s`,
    met: run.wallSeconds < MAX_SECONDS,
  });
  record(ctx, { stage: 'score', metric: 'of which publish', value: publishSeconds, unit: 's' });
  snapshot.scored = true;
}

/** H days of trips ending with day D, published. */
export async function historySnapshot(ctx: BenchContext): Promise<Snapshot> {
  if (ctx.historySnapshot) return ctx.historySnapshot;
  const days = ctx.options.sizes.historyDays;
  const { dir, trips } = await historyDir(ctx, 'history', days, ctx.day);
  ctx.historySnapshot = { dir, trips, scored: false };
  return ctx.historySnapshot;
}
