import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { runNodeChild, jobJson } from './child.js';
import { bareRead, floorWrite } from './bare-read.js';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { diskUse, dropDataDir, ensureDayFiles, newDataDir } from './fixtures.js';
import { benchUploads } from './uploads-stage.js';

/** The target: the full load (validation, derivation, statistics, points, publish) within 2x of the floor. */
const MAX_RATIO = 2;
/** Statements of the load's SQL trace reported, slowest first. */
const TRACE_TOP = 5;

/**
 * Load: one day of every user's points, from NDJSON and from Parquet, by the real `load.js` into an
 * empty data folder, beside the floor timed in the same run: DuckDB's bare read of the same files
 * plus DuckDB's own sorted ZSTD Parquet write of their points (work any load must do). The load
 * runs with its SQL trace on; the slowest statements (summed over files) are reported. Then the
 * first NDJSON file's records as SDK uploads (bench/uploads-stage.ts).
 */
export async function benchLoad(ctx: BenchContext): Promise<void> {
  for (const format of ['ndjson', 'parquet'] as const) {
    const input = (await ensureDayFiles(ctx, format)).dir;
    ctx.progress(`bench: load: bare read of ${format}`);
    const bare = await bareRead(format, input);
    record(ctx, {
      stage: 'load',
      metric: `${format}: bare read (read_${format} + unnest)`,
      value: bare.seconds,
      unit: 's',
    });
    record(ctx, {
      stage: 'load',
      metric: `${format}: bare read points/s`,
      value: Math.round(bare.points / bare.seconds),
      unit: 'points/s',
    });
    ctx.progress(`bench: load: sorted ZSTD Parquet write of the ${format} points`);
    const writeDir = join(ctx.options.workDir, `floor-write-${format}`);
    const write = await floorWrite(format, input, writeDir);
    rmSync(writeDir, { recursive: true, force: true });
    record(ctx, {
      stage: 'load',
      metric: `${format}: sorted ZSTD Parquet write of the points`,
      value: write,
      unit: 's',
    });
    const floor = bare.seconds + write;
    record(ctx, { stage: 'load', metric: `${format}: floor (bare read + write)`, value: floor, unit: 's' });

    const dir = await newDataDir(ctx, `load-${format}`);
    const trace = new Map<string, number>();
    const options = {
      ...childOptions(ctx, false),
      env: { DRIVING_SQL_TRACE: '1' },
      onStderrLine: (line: string) => {
        const m = /^sql ([0-9.]+) s: (.*)$/.exec(line);
        if (!m) ctx.progress(`  [load ${format}] ${line}`);
        else if (m[2]) trace.set(statementName(m[2]), (trace.get(statementName(m[2])) ?? 0) + Number(m[1]));
      },
    };
    const run = await runNodeChild(
      `load ${format}`,
      jobScript(ctx, 'load'),
      ['--data-dir', dir, '--input', input, '--json'],
      options,
    );
    ctx.children.push(run);
    const result = jobJson(run);
    const totals = result['totals'] as { pointsRead: number; tripsLoaded: number; filesFailed: number };
    const files = result['files'] as { failed?: string }[];
    const published = result['publish'] as { seconds: number };
    if (totals.filesFailed > 0) {
      const reason = files.find((f) => f.failed)?.failed ?? 'unknown';
      record(ctx, {
        stage: 'load',
        metric: `${format}: load (load.js)`,
        value: `${totals.filesFailed}/${files.length} files failed: ${reason}`,
        unit: '',
        target: 'all files load',
        met: false,
      });
    }
    record(ctx, {
      stage: 'load',
      metric: `${format}: load.js wall (${totals.tripsLoaded.toLocaleString('en-US')} trips)`,
      value: run.wallSeconds,
      unit: 's',
    });
    record(ctx, {
      stage: 'load',
      metric: `${format}: load.js points/s`,
      value: Math.round(totals.pointsRead / run.wallSeconds),
      unit: 'points/s',
    });
    record(ctx, { stage: 'load', metric: `${format}: of which publish`, value: published.seconds, unit: 's' });
    record(ctx, {
      stage: 'load',
      metric: `${format}: load / bare read`,
      value: run.wallSeconds / bare.seconds,
      unit: 'x',
    });
    const ratio = run.wallSeconds / floor;
    record(ctx, {
      stage: 'load',
      metric: `${format}: load / floor`,
      value: ratio,
      unit: 'x',
      target: `<= ${MAX_RATIO}x`,
      met: ratio <= MAX_RATIO && totals.filesFailed === 0,
    });
    const slowest = [...trace.entries()].sort((a, b) => b[1] - a[1]).slice(0, TRACE_TOP);
    slowest.forEach(([statement, seconds], i) =>
      record(ctx, { stage: 'load', metric: `${format}: trace #${i + 1} ${statement}`, value: seconds, unit: 's' }),
    );
    ctx.disk.push(diskUse(dir, `one loaded day (${format})`, 1));
    dropDataDir(ctx, dir);
    if (format === 'ndjson') await benchUploads(ctx, input);
    // only this stage reads the NDJSON copy, the largest thing a run writes (about 25 GB at full size)
    if (format === 'ndjson' && !ctx.options.keep) {
      dropDataDir(ctx, input);
      delete ctx.dayFiles.ndjson;
    }
  }
}

/** A traced statement's short name: the table it creates, or its first words. */
export function statementName(text: string): string {
  const created = /^create or replace temp (?:table|view) "?([a-z_]+)"?/i.exec(text);
  if (created) return created[1] as string;
  if (/^copy \(/i.test(text)) return 'copy points to parquet';
  return text.slice(0, 48);
}
