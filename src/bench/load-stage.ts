import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { runNodeChild, jobJson } from './child.js';
import { bareRead } from './bare-read.js';
import { diskUse, dropDataDir, ensureDayFiles, newDataDir } from './fixtures.js';

/** Target of issue 5: the full load (validation, derivation, statistics, publish) within 2x of the bare read. */
const MAX_RATIO = 2;

/**
 * Load: one day of every user's points, from NDJSON and from Parquet, by the real `load.js` into an
 * empty data folder, beside DuckDB's bare read of the same files timed in the same run.
 */
export async function benchLoad(ctx: BenchContext): Promise<void> {
  for (const format of ['ndjson', 'parquet'] as const) {
    const input = (await ensureDayFiles(ctx, format)).dir;
    ctx.progress(`bench: load: bare read of ${format}`);
    const bare = await bareRead(format, input);
    record(ctx, { stage: 'load', metric: `${format}: bare read (read_${format} + unnest)`, value: bare.seconds, unit: 's' });
    record(ctx, { stage: 'load', metric: `${format}: bare read points/s`, value: Math.round(bare.points / bare.seconds), unit: 'points/s' });

    const dir = await newDataDir(ctx, `load-${format}`);
    const run = await runNodeChild(`load ${format}`, jobScript(ctx, 'load'), ['--data-dir', dir, '--input', input, '--json'], childOptions(ctx));
    ctx.children.push(run);
    const result = jobJson(run);
    const totals = result['totals'] as { pointsRead: number; tripsLoaded: number; filesFailed: number };
    const files = result['files'] as { failed?: string }[];
    const published = result['publish'] as { seconds: number };
    if (totals.filesFailed > 0) {
      const reason = files.find((f) => f.failed)?.failed ?? 'unknown';
      record(ctx, { stage: 'load', metric: `${format}: load (load.js)`, value: `${totals.filesFailed}/${files.length} files failed: ${reason}`, unit: '', target: 'all files load', met: false });
    }
    record(ctx, { stage: 'load', metric: `${format}: load.js wall (${totals.tripsLoaded.toLocaleString('en-US')} trips)`, value: run.wallSeconds, unit: 's' });
    record(ctx, { stage: 'load', metric: `${format}: load.js points/s`, value: Math.round(totals.pointsRead / run.wallSeconds), unit: 'points/s' });
    record(ctx, { stage: 'load', metric: `${format}: of which publish`, value: published.seconds, unit: 's' });
    const ratio = run.wallSeconds / bare.seconds;
    record(ctx, { stage: 'load', metric: `${format}: load / bare read`, value: ratio, unit: 'x', target: `<= ${MAX_RATIO}x`, met: ratio <= MAX_RATIO && totals.filesFailed === 0 });
    ctx.disk.push(diskUse(dir, `one loaded day (${format})`, 1));
    dropDataDir(ctx, dir);
    // only this stage reads the NDJSON copy, the largest thing a run writes (about 25 GB at full size)
    if (format === 'ndjson' && !ctx.options.keep) {
      dropDataDir(ctx, input);
      delete ctx.dayFiles.ndjson;
    }
  }
}
