import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../src/data-folder.js';
import { uploadFileName } from '../src/load/uploads.js';
import { childOptions, jobScript, record, type BenchContext } from './context.js';
import { runNodeChild, jobJson } from './child.js';
import { dropDataDir, newDataDir } from './fixtures.js';

/** Uploads loaded as files of their own: enough for a per-file cost, few enough to take seconds. */
const SINGLE_UPLOADS = 100;

/**
 * SDK uploads: the first NDJSON day file's records as one-trip upload files, named as the API
 * names them, in the landing area of a new data folder; the real `load.js` batches and loads them.
 * Beside it, the first SINGLE_UPLOADS of them loaded as files of their own (batching off): the
 * cost a file adds, which batching saves.
 */
export async function benchUploads(ctx: BenchContext, ndjsonDir: string): Promise<void> {
  const first = readdirSync(ndjsonDir)
    .filter((n) => n.endsWith('.ndjson'))
    .sort()[0];
  if (!first) return;
  const lines = readFileSync(join(ndjsonDir, first), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  for (const [label, count, batchBytes] of [
    ['batched', lines.length, undefined],
    ['as files of their own', Math.min(SINGLE_UPLOADS, lines.length), '0'],
  ] as const) {
    const dir = await newDataDir(ctx, `uploads-${batchBytes ?? 'batched'}`);
    const landing = pathsFor(dir).landingDir;
    mkdirSync(landing, { recursive: true });
    const start = Date.parse(`${ctx.day}T12:00:00Z`);
    lines
      .slice(0, count)
      .forEach((line, i) => writeFileSync(join(landing, uploadFileName(new Date(start + i))), `${line}\n`));
    ctx.progress(`bench: load: ${count} one-trip SDK uploads, ${label}`);
    const options = {
      ...childOptions(ctx, false),
      env: batchBytes === undefined ? {} : { DRIVING_LOAD_UPLOAD_BATCH_BYTES: batchBytes },
    };
    const run = await runNodeChild(
      `load uploads ${label}`,
      jobScript(ctx, 'load'),
      ['--data-dir', dir, '--json'],
      options,
    );
    ctx.children.push(run);
    const totals = jobJson(run)['totals'] as { files: number; filesFailed: number };
    record(ctx, {
      stage: 'load',
      metric: `sdk: ${count.toLocaleString('en-US')} one-trip uploads ${label} (${totals.files} file(s) loaded): load.js wall`,
      value: run.wallSeconds,
      unit: 's',
    });
    record(ctx, {
      stage: 'load',
      metric: `sdk: ${label}: load.js wall per upload`,
      value: (run.wallSeconds / count) * 1000,
      unit: 'ms',
    });
    dropDataDir(ctx, dir);
  }
}
