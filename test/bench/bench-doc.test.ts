import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendRun, MARKER, rowKey } from '../../bench/doc.js';
import type { BenchContext, Measurement } from '../../bench/context.js';
import { benchOptions } from '../../bench/options.js';

// docs/benchmarks.md keeps current figures in one table: a run replaces the rows of the stages and
// size it ran, and leaves every other row (other stages, other sizes, rows written by hand) and the
// hand-written text around the table alone.
const dir = mkdtempSync(join(tmpdir(), 'bench-doc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const machine = { cores: 2, memoryGiB: 24, cpu: 'test cpu', node: 'v20', duckdb: '1.5.5', commit: 'abc1234' };

function context(stages: string[], measurements: Measurement[], docFile: string, users?: number): BenchContext {
  const options = benchOptions({ only: [stages.join(',')], ...(users ? { users } : {}) }, '/repo');
  return {
    options: { ...options, docFile },
    measurements,
    startedAt: new Date('2026-11-24T08:00:00Z'),
    loadBefore: 0.5,
    day: '2026-11-23',
    scoreDate: '2026-11-24',
  } as unknown as BenchContext;
}

const rowsOf = (text: string, key: string): string[] => text.split('\n').filter((l) => l.startsWith(`| ${key} |`));

describe('the benchmarks document', () => {
  it('keys the cells stage by its drivers per cell, whatever --users says', () => {
    const ctx = context(['cells'], [], join(dir, 'unused.md'), 20_000);
    expect(rowKey(ctx, 'cells')).toBe('cells, 2 cells × 1,000 drivers');
    expect(rowKey(ctx, 'load')).toBe('load, 20,000 users');
    const bigger = { ...ctx, options: { ...ctx.options, sizes: { ...ctx.options.sizes, cellsDrivers: 5_000 } } };
    expect(rowKey(bigger, 'cells')).toBe('cells, 2 cells × 5,000 drivers');
  });

  it('replaces the rows of a stage and size it ran and keeps the others', () => {
    const file = join(dir, 'benchmarks.md');
    const handWritten = '| export, demo | trips/s | 2,881 | | `node jobs/bench-export.js` | `0000000` |';
    writeFileSync(
      file,
      `# Benchmarks\n\nHand-written figures.\n\n${MARKER}\n\n| Stage and size | Figure | Value | Target | Reproduce | Commit |\n|---|---|---|---|---|---|\n${handWritten}\n\n## How the figures are made\n\nText.\n`,
    );
    const load = (value: number): Measurement => ({
      stage: 'load',
      metric: 'ndjson: load / floor',
      value,
      unit: 'x',
      target: '<= 2x',
      met: value <= 2,
    });
    const setup: Measurement = { stage: 'setup', metric: 'passport accounts', value: 1, unit: 's' };
    const score: Measurement = { stage: 'score', metric: 'score.js', value: 12.5, unit: 's' };
    appendRun(context(['load', 'score'], [setup, load(2.5), score], file), machine, 60);
    appendRun(context(['load'], [load(3.1)], file, 20_000), machine, 60);
    appendRun(context(['load'], [load(1.8)], file), machine, 30);
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('# Benchmarks\n\nHand-written figures.\n')).toBe(true);
    expect(text).toContain(handWritten);
    expect(text).toContain('## How the figures are made\n\nText.\n');
    // one table: the hand-written row, then each stage and size's rows
    expect(text.match(/\| Stage and size \|/g)).toHaveLength(1);
    const small = rowsOf(text, 'load, 2,000 users');
    expect(small).toHaveLength(1);
    expect(small[0]).toContain('1.80 x');
    expect(small[0]).toContain('<= 2x: met at this size');
    expect(small[0]).toContain('`abc1234`, 2026-11-24');
    expect(text).not.toContain('2.50 x');
    expect(rowsOf(text, 'load, 20,000 users')[0]).toContain('3.10 x');
    expect(rowsOf(text, 'load, 20,000 users')[0]).toContain('**not met**');
    expect(rowsOf(text, 'score, 2,000 users × 90 days')).toHaveLength(1);
    expect(text).toContain('12.5 s');
    // setup steps and run diaries stay out of the doc
    expect(text).not.toContain('passport accounts');
    expect(text).not.toMatch(/load average/i);
    // every table row sits together, between the marker and the next section
    const table = text.slice(text.indexOf(MARKER), text.indexOf('## How the figures are made'));
    expect(table.split('\n').filter((l) => l.startsWith('|'))).toHaveLength(2 + 4);
  });

  it('replaces, of a stage measured at several settings, the rows of the settings it ran', () => {
    const file = join(dir, 'rests.md');
    writeFileSync(file, `# Benchmarks\n\n${MARKER}\n`);
    const rest = (ms: number, ratio: number): Measurement => ({
      stage: 'watch-rest',
      metric: `--max-rest-ms ${ms}: peak, CPU a trip, watch / nightly`,
      value: ratio,
      unit: '×',
      target: '<= 1.5',
      met: ratio <= 1.5,
    });
    appendRun(context(['watch-rest'], [rest(0, 8.2), rest(10000, 1.4)], file), machine, 60);
    appendRun(context(['watch-rest'], [rest(10000, 1.2)], file), machine, 60);
    const rows = rowsOf(readFileSync(file, 'utf8'), 'watch-rest, 2,000 users');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain('--max-rest-ms 0:');
    expect(rows[0]).toContain('8.20 ×');
    expect(rows[1]).toContain('--max-rest-ms 10000:');
    expect(rows[1]).toContain('1.20 ×');
    expect(rows.join('\n')).not.toContain('1.40 ×');
  });

  it('starts the document and its table when there is none', () => {
    const file = join(dir, 'new.md');
    appendRun(
      context(
        ['score'],
        [{ stage: 'score', metric: 'score.js', value: 0.46, unit: 's', target: '< 0.5 s', met: true }],
        file,
      ),
      machine,
      5,
    );
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('Machine: 2 cores, 24 GiB, test cpu, Node v20, DuckDB 1.5.5');
    expect(rowsOf(text, 'score, 2,000 users × 90 days')[0]).toContain('< 0.5 s: met at this size');
    // the machine is said once, not in each row
    expect(rowsOf(text, 'score, 2,000 users × 90 days')[0]).not.toContain('test cpu');
  });
});
