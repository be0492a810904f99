import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { jobJson, runNodeChild } from './child.js';
import { diskUse, dropDataDir, ensureDayFiles, historyDir } from './fixtures.js';
import { growthDays } from './options.js';
import { addDays } from '../src/time.js';
import { pathsFor } from '../src/data-folder.js';
import { readManifest } from '../src/publish/manifest.js';
import { mergeLayers } from '../src/serving/build.js';
import { EXTRAS_SUFFIX, LAYERED } from '../src/serving/format.js';
import { SectionFile } from '../src/serving/pack.js';

/** Target: loading and publishing day 90 within 1.5x of day 1. */
const MAX_RATIO = 1.5;

/**
 * Growth: the real `load.js` of the same day of points (Parquet) on top of N-1 days of synthesized
 * history, for N = 1, 30 and the history length. If publish and merge follow the new data, the
 * times stay flat; if they follow the history, they grow with N.
 */
export async function benchGrowth(ctx: BenchContext): Promise<void> {
  const day = await ensureDayFiles(ctx, 'parquet');
  const steps = growthDays(ctx.options.sizes.historyDays);
  const seconds = new Map<number, { wall: number; publish: number }>();
  for (const n of steps) {
    const { dir, trips } = await historyDir(ctx, `growth-${n}`, n - 1, addDays(ctx.day, -1));
    const run = await runNodeChild(
      `load day ${n}`,
      jobScript(ctx, 'load'),
      ['--data-dir', dir, '--input', day.dir, '--json'],
      childOptions(ctx),
    );
    ctx.children.push(run);
    const result = jobJson(run);
    const totals = result['totals'] as { filesFailed: number; tripsLoaded: number };
    if (totals.filesFailed > 0) throw new Error(`load of day ${n}: ${totals.filesFailed} file(s) failed`);
    const publishSeconds = (result['publish'] as { seconds: number }).seconds;
    seconds.set(n, { wall: run.wallSeconds, publish: publishSeconds });
    record(ctx, {
      stage: 'growth',
      metric: `day ${n}: load + publish (parquet, ${trips.toLocaleString('en-US')} trips before)`,
      value: run.wallSeconds,
      unit: 's',
    });
    record(ctx, { stage: 'growth', metric: `day ${n}: of which publish`, value: publishSeconds, unit: 's' });
    if (n === steps[steps.length - 1]) {
      if (ctx.options.mergeCost) mergeCost(ctx, dir, n);
      ctx.disk.push(diskUse(dir, `${n} days of trips (${n - 1} synthesized, no points, + 1 loaded)`, n));
      ctx.historySnapshot = { dir, trips: trips + totals.tripsLoaded, scored: false };
    } else dropDataDir(ctx, dir);
  }
  const first = seconds.get(steps[0] as number);
  const last = seconds.get(steps[steps.length - 1] as number);
  if (first && last && steps.length > 1) {
    const ratio = last.wall / first.wall;
    record(ctx, {
      stage: 'growth',
      metric: `day ${steps[steps.length - 1]} / day 1 (load + publish)`,
      value: ratio,
      unit: 'x',
      target: `<= ${MAX_RATIO}x`,
      met: ratio <= MAX_RATIO,
    });
    record(ctx, {
      stage: 'growth',
      metric: `day ${steps[steps.length - 1]} / day 1 (publish only)`,
      value: last.publish / first.publish,
      unit: 'x',
    });
  }
}

/**
 * The publish that does not follow the new data: the day the deltas have grown to half the base
 * and every layer is merged into a new one (src/serving/layers.ts; about once every history/2
 * days). Measured here as that merge of the last day's layers, written beside them and removed.
 */
function mergeCost(ctx: BenchContext, dir: string, n: number): void {
  const paths = pathsFor(dir);
  const pack = readManifest(paths.manifestFile)?.pack;
  if (!pack) return;
  for (const section of LAYERED) {
    const layers = pack.files[section]
      .map((name) => SectionFile.open(join(paths.publishedDir, name), section))
      .reverse();
    const out = join(paths.publishedDir, `bench-merge-${section}.pack`);
    try {
      const result = mergeLayers(layers, out, section, 0, pack.zones, true);
      record(ctx, {
        stage: 'growth',
        metric: `day ${n}: merge of all ${layers.length} ${section} layers into a new base (${result.rows.toLocaleString('en-US')} rows, ${(result.bytes / 2 ** 30).toFixed(1)} GiB; the rare publish)`,
        value: result.seconds,
        unit: 's',
      });
    } finally {
      for (const f of layers) f.close();
      rmSync(out, { force: true });
      rmSync(`${out}${EXTRAS_SUFFIX}`, { force: true });
    }
  }
}
