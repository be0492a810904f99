import { record, type BenchContext } from './context.js';
import { benchLoad } from './load-stage.js';
import { mib } from './fixtures.js';

/** Target: every job under 4 GiB of peak resident memory. */
const MAX_RSS_BYTES = 4 * 2 ** 30;

/**
 * Memory and disk: the peak RSS every job process of this run reported on exit (rss-probe.ts),
 * and the bytes a day of data costs, from the data folders the other stages measured. Run alone,
 * it runs the load stage first to have something to report.
 */
export async function benchResources(ctx: BenchContext): Promise<void> {
  if (ctx.children.length === 0) await benchLoad(ctx);
  for (const run of ctx.children) {
    if (run.peakRssBytes === null) {
      // a job that could not report (killed, out of memory) has not shown it stays under the limit
      record(ctx, {
        stage: 'resources',
        metric: `peak RSS: ${run.label}`,
        value: `not reported (exit ${run.exitCode})`,
        unit: '',
        target: '< 4096 MiB',
        met: false,
      });
      continue;
    }
    record(ctx, {
      stage: 'resources',
      metric: `peak RSS: ${run.label}`,
      value: Number(mib(run.peakRssBytes)),
      unit: 'MiB',
      target: '< 4096 MiB',
      met: run.peakRssBytes < MAX_RSS_BYTES,
    });
  }
  for (const use of ctx.disk) {
    const perDay = (bytes: number): number => Number(mib(bytes / use.days));
    // raw points exist only for loaded days (history is synthesized without them)
    if (use.days === 1) {
      record(ctx, {
        stage: 'resources',
        metric: `disk per day, ${use.label}: raw points Parquet`,
        value: perDay(use.pointsBytes),
        unit: 'MiB/day',
      });
      record(ctx, {
        stage: 'resources',
        metric: `disk per day, ${use.label}: route files`,
        value: perDay(use.routesBytes),
        unit: 'MiB/day',
      });
    }
    record(ctx, {
      stage: 'resources',
      metric: `disk per day, ${use.label}: warehouse`,
      value: perDay(use.warehouseBytes),
      unit: 'MiB/day',
    });
    record(ctx, {
      stage: 'resources',
      metric: `disk per day, ${use.label}: published slots`,
      value: perDay(use.slotsBytes),
      unit: 'MiB/day',
    });
    record(ctx, {
      stage: 'resources',
      metric: `disk per day, ${use.label}: serving pack`,
      value: perDay(use.packBytes),
      unit: 'MiB/day',
    });
  }
}
