import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendRun } from '../../bench/doc.js';
import type { BenchContext, Measurement } from '../../bench/context.js';
import { benchOptions } from '../../bench/options.js';

// docs/benchmarks.md keeps current figures: a run replaces the previous run of the same stage and
// size, and leaves every other stage's section and the hand-written text above alone.
const dir = mkdtempSync(join(tmpdir(), 'bench-doc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const machine = { cores: 2, memoryGiB: 24, cpu: 'test cpu', node: 'v20', duckdb: '1.5.5', commit: 'abc1234' };

function context(stages: string[], measurements: Measurement[], docFile: string): BenchContext {
  const options = benchOptions({ only: [stages.join(',')] }, '/repo');
  return {
    options: { ...options, docFile }, measurements, startedAt: new Date('2026-11-24T08:00:00Z'), loadBefore: 0.5,
    day: '2026-11-23', scoreDate: '2026-11-24',
  } as unknown as BenchContext;
}

describe('the benchmarks document', () => {
  it('replaces the section of a stage and size it ran and keeps the others', () => {
    const file = join(dir, 'benchmarks.md');
    writeFileSync(file, '# Benchmarks\n\nHand-written figures.\n');
    const load = (value: number): Measurement => ({ stage: 'load', metric: 'ndjson: load / floor', value, unit: 'x', target: '<= 2x', met: value <= 2 });
    const score: Measurement = { stage: 'score', metric: 'score.js', value: 12.5, unit: 's' };
    appendRun(context(['load', 'score'], [load(2.5), score], file), machine, 60);
    appendRun(context(['load'], [load(1.8)], file), machine, 30);
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('# Benchmarks\n\nHand-written figures.\n')).toBe(true);
    expect(text.match(/### load: small/g)).toHaveLength(1);
    expect(text).toContain('1.80 x');
    expect(text).not.toContain('2.50 x');
    expect(text.match(/### score: small/g)).toHaveLength(1);
    expect(text).toContain('12.5 s');
  });
});
