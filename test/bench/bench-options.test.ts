// The bench's sizes and flags: a size's defaults, overrides for a mid size, stages by name, the
// disk a run asks for.
import { describe, expect, it } from 'vitest';
import { SIZES, benchOptions, cellsHistoryDays, growthDays } from '../../bench/options.js';
import { diskNeeded } from '../../bench/disk.js';
import { resultTable } from '../../bench/table.js';

describe('bench options', () => {
  it("takes a size's defaults and lets flags override them", () => {
    expect(benchOptions({}, '/repo').sizes).toEqual(SIZES.small);
    const mid = benchOptions({ size: 'full', users: 20_000, historyDays: 30, only: ['load,api'] }, '/repo');
    expect(mid.sizes).toMatchObject({ users: 20_000, historyDays: 30, apiTrips: 5_000_000 });
    expect(mid.stages).toEqual(['load', 'api']);
    expect(mid.docFile).toBe('/repo/docs/benchmarks.md');
    expect(mid.watchRests).toEqual([0, 2_500, 5_000, 10_000]);
    expect(benchOptions({ watchRests: '10000, 12000' }, '/repo').watchRests).toEqual([10_000, 12_000]);
    expect(mid.sliceMib).toEqual([32]);
    expect(benchOptions({ sliceMib: '0,32,64' }, '/repo').sliceMib).toEqual([0, 32, 64]);
    expect(() => benchOptions({ sliceMib: '32,x' }, '/repo')).toThrow(/--slice-mib/);
  });

  it('refuses unknown stages, sizes and impossible numbers', () => {
    expect(() => benchOptions({ only: ['lod'] }, '/repo')).toThrow(/unknown stage 'lod'/);
    expect(() => benchOptions({ size: 'huge' }, '/repo')).toThrow(/--size/);
    expect(() => benchOptions({ users: 0 }, '/repo')).toThrow(/--users/);
    expect(() => benchOptions({ historyDays: 1.5 }, '/repo')).toThrow(/--history-days/);
    expect(() => benchOptions({ watchRests: '10000,-1' }, '/repo')).toThrow(/--watch-rests/);
    expect(() => benchOptions({ watchRests: '' }, '/repo')).toThrow(/--watch-rests/);
  });

  it('runs the cells stage at its own drivers per cell, over at most 30 days of history', () => {
    expect(benchOptions({}, '/repo').sizes.cellsDrivers).toBe(1_000);
    expect(benchOptions({ size: 'full' }, '/repo').sizes.cellsDrivers).toBe(50_000);
    const run = benchOptions({ only: ['cells'], cellsDrivers: 5_000 }, '/repo');
    expect(run.stages).toEqual(['cells']);
    expect(run.sizes.cellsDrivers).toBe(5_000);
    expect(() => benchOptions({ cellsDrivers: 5 }, '/repo')).toThrow(/--cells-drivers/);
    expect(() => benchOptions({ cellsDrivers: 10.5 }, '/repo')).toThrow(/--cells-drivers/);
    expect(cellsHistoryDays(SIZES.small)).toBe(30);
    expect(cellsHistoryDays({ ...SIZES.small, historyDays: 7 })).toBe(7);
    // two cells' day twice, their history twice and an API machine's copy: more drivers, more disk
    const gib = (n: number): number => n / 2 ** 30;
    const at = (cellsDrivers: number): number => diskNeeded({ ...SIZES.small, cellsDrivers }, ['cells']);
    expect(gib(at(5_000))).toBeGreaterThan(8);
    expect(gib(at(5_000))).toBeLessThan(20);
    expect(at(50_000)).toBeGreaterThan(9 * (at(5_000) - 2 ** 30));
    expect(diskNeeded(SIZES.small, ['score'])).toBeLessThan(diskNeeded(SIZES.small, ['score', 'cells']));
  });

  it('grows day N for N = 1, 30 and the history length', () => {
    expect(growthDays(90)).toEqual([1, 30, 90]);
    expect(growthDays(10)).toEqual([1, 10]);
  });

  it('asks for tens of GB at full size and little for small, the generated day only for the stages that load it', () => {
    const gib = (n: number): number => n / 2 ** 30;
    // the history phase: 13 M trips' warehouse, slots and pack beside the Parquet day
    expect(gib(diskNeeded(SIZES.full))).toBeGreaterThan(60);
    expect(gib(diskNeeded(SIZES.full))).toBeLessThan(70);
    expect(gib(diskNeeded(SIZES.full, ['score', 'api']))).toBeGreaterThan(45);
    // the NDJSON day (25 GB) is gone before the history is built: it adds only when the folder is kept
    expect(gib(diskNeeded(SIZES.full, ['load']))).toBeGreaterThan(25);
    expect(gib(diskNeeded(SIZES.full, ['load']))).toBeLessThan(40);
    expect(diskNeeded(SIZES.full, ['load', 'score', 'api'])).toBeLessThan(
      diskNeeded(SIZES.full, ['score', 'api']) + 15 * 2 ** 30,
    );
    expect(diskNeeded(SIZES.full, ['load', 'score', 'api'], true)).toBeGreaterThan(
      diskNeeded(SIZES.full, ['score', 'api']) + 30 * 2 ** 30,
    );
    // growth loads the Parquet day only
    expect(diskNeeded(SIZES.full, ['growth', 'score'])).toBeGreaterThan(
      diskNeeded(SIZES.full, ['score']) + 5 * 2 ** 30,
    );
    expect(gib(diskNeeded(SIZES.small))).toBeLessThan(3);
  });

  it('prints a table with a row per measurement and the misses marked', () => {
    const table = resultTable([
      { stage: 'score', metric: 'score.js', value: 72.5, unit: 's', target: '< 60 s', met: false },
      { stage: 'load', metric: 'points/s', value: 1234567, unit: 'points/s' },
    ]);
    expect(table.split('\n')).toHaveLength(4);
    expect(table).toContain('**NO**');
    expect(table).toContain('1,234,567 points/s');
  });
});

describe('api warm-up', () => {
  it('lasts at least 2 s, and long enough to send every path once', async () => {
    const { warmupSeconds } = await import('../../bench/api-stage.js');
    expect(warmupSeconds(1, 1000)).toBe(2);
    expect(warmupSeconds(4000, 1000)).toBe(4);
    expect(warmupSeconds(4000, 200)).toBe(20);
    expect(warmupSeconds(4001, 1000)).toBe(5);
  });
});
