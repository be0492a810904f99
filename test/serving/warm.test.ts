import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PageCacheWarmer } from '../../src/serving/warm.js';

const dir = mkdtempSync(join(tmpdir(), 'warm-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// sizes around the 4 MiB chunk: several chunks, a remainder, an empty file
const sizes = [9 * 2 ** 20 + 7, 0, 4 * 2 ** 20];
const files = sizes.map((n, i) => {
  const file = join(dir, `f${i}`);
  writeFileSync(file, Buffer.alloc(n, i + 1));
  return file;
});

describe('page cache warmer', () => {
  it('reads every byte of every file and reports it warm', async () => {
    const warmer = new PageCacheWarmer(files);
    expect(warmer.state.state).toBe('warming');
    const done = await warmer.done;
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(done).toMatchObject({ state: 'warm', files: 3, totalBytes: total, readBytes: total });
    expect(warmer.state).toEqual(done);
  });

  it('stops when asked, before reading the rest', async () => {
    const warmer = new PageCacheWarmer(files);
    warmer.stop();
    const done = await warmer.done;
    expect(done.state).toBe('stopped');
    expect(done.readBytes).toBe(0);
  });

  it('reports a file it cannot read instead of throwing', async () => {
    const done = await new PageCacheWarmer([files[0] as string, join(dir, 'missing')]).done;
    expect(done.state).toBe('failed');
    expect(done.error).toMatch(/missing/);
  });
});
