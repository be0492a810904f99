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

  it('does not read again a file this process read whole for an earlier snapshot, unless it changed', async () => {
    const layers = [0, 1].map((i) => {
      const file = join(dir, `layer${i}`);
      writeFileSync(file, Buffer.alloc(5 * 2 ** 20, i + 7));
      return file;
    });
    expect(await new PageCacheWarmer(layers).done).toMatchObject({ state: 'warm', files: 2, alreadyWarm: 0 });
    // the next snapshot names the same base and a new delta
    const delta = join(dir, 'layer2');
    writeFileSync(delta, Buffer.alloc(1000, 9));
    expect(await new PageCacheWarmer([...layers, delta]).done).toMatchObject({
      state: 'warm',
      files: 3,
      alreadyWarm: 2,
      readBytes: 2 * 5 * 2 ** 20 + 1000,
    });
    // a file written anew under the same name is read again
    writeFileSync(layers[1] as string, Buffer.alloc(6 * 2 ** 20, 3));
    expect(await new PageCacheWarmer(layers).done).toMatchObject({ state: 'warm', alreadyWarm: 1 });
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
