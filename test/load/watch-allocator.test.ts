// The continuous load keeps the memory a batch freed for the next one (src/jobs/allocator.ts): DuckDB's
// allocator reads the setting once, from a variable the entry point sets before the library loads.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { WATCH_ALLOCATOR_CONF, runsBatchAfterBatch } from '../../src/jobs/allocator.js';

const VARIABLE = 'DUCKDB_JE_MALLOC_CONF';

const require = createRequire(import.meta.url);

describe('the watch’s allocator setting', () => {
  it('is for the watch, not for a run that ends', () => {
    expect(runsBatchAfterBatch(['--data-dir', 'd', '--watch'])).toBe(true);
    expect(runsBatchAfterBatch(['--data-dir', 'd'])).toBe(false);
    expect(runsBatchAfterBatch(['--rederive'])).toBe(false);
    expect(WATCH_ALLOCATOR_CONF).toMatch(/^dirty_decay_ms:\d+,muzzy_decay_ms:\d+$/);
  });

  // jemalloc is DuckDB's allocator on Linux x64 only; elsewhere the variable is read by nobody
  it.runIf(process.platform === 'linux' && process.arch === 'x64')(
    'reaches DuckDB’s allocator when set as the entry point sets it',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'allocator-'));
      try {
        const script = join(dir, 'entry.mjs');
        const root = resolve('.');
        // as jobs/load.js: the setting's module first, DuckDB after; jemalloc's own statistics at
        // exit (asked for in the same variable) say which decay it runs with
        writeFileSync(
          script,
          [
            `await import(${JSON.stringify(join(root, 'dist/src/jobs/allocator.js'))});`,
            `process.env.${VARIABLE} = [process.env.${VARIABLE}, 'stats_print:true'].filter(Boolean).join(',');`,
            `const { DuckDBInstance } = await import(${JSON.stringify(require.resolve('@duckdb/node-api'))});`,
            `const db = await DuckDBInstance.create(':memory:');`,
            `await (await db.connect()).run('select sum(i) from range(100000) t(i)');`,
          ].join('\n'),
        );
        const watch = spawnSync(process.execPath, [script, '--watch'], { encoding: 'utf8', env: withoutSetting() });
        expect(watch.status, watch.stderr).toBe(0);
        expect(watch.stderr).toMatch(/opt\.dirty_decay_ms: 60000\b/);
        expect(watch.stderr).toMatch(/opt\.muzzy_decay_ms: 60000\b/);
        // a plain run: the module sets nothing (the appended statistics request alone reaches jemalloc)
        const once = spawnSync(process.execPath, [script], { encoding: 'utf8', env: withoutSetting() });
        expect(once.status, once.stderr).toBe(0);
        expect(once.stderr).toMatch(/opt\.dirty_decay_ms: \d+/);
        expect(once.stderr).not.toMatch(/opt\.dirty_decay_ms: 60000\b/);
        // the operator's own setting wins, also in a watch
        const own = spawnSync(process.execPath, [script, '--watch'], {
          encoding: 'utf8',
          env: { ...withoutSetting(), [VARIABLE]: 'dirty_decay_ms:5000' },
        });
        expect(own.status, own.stderr).toBe(0);
        expect(own.stderr).toMatch(/opt\.dirty_decay_ms: 5000\b/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

function withoutSetting(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env[VARIABLE];
  return env;
}
