import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small tmpfs of the test's own: a disk that a test can fill. */
export interface Tmpfs {
  dir: string;
  /** Fills the disk with a file, leaving `leaveBytes` free (rounded to its pages); returns the file. */
  fill(leaveBytes?: number): string;
  /** Bytes still free. */
  free(): number;
  unmount(): void;
}

/**
 * Mounts a tmpfs of `sizeBytes` on a new folder (as root: the suite runs as root here and in
 * CI). Where mount is not permitted, a string saying why, for the test to skip with it.
 */
export function mountTmpfs(sizeBytes: number): Tmpfs | string {
  const dir = mkdtempSync(join(tmpdir(), 'dds-tmpfs-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (mounted.status !== 0) {
    rmdirSync(dir);
    return `mount -t tmpfs not permitted here (${(mounted.stderr || mounted.error?.message || 'failed').trim()})`;
  }
  let fillers = 0;
  const free = () => {
    const st = statfsSync(dir);
    return st.bavail * st.bsize;
  };
  return {
    dir,
    free,
    fill(leaveBytes = 0) {
      const file = join(dir, `filler-${fillers++}`);
      const fd = openSync(file, 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        for (let left = free() - leaveBytes; left > 0; left = free() - leaveBytes)
          writeSync(fd, chunk, 0, Math.min(chunk.length, left));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
      return file;
    },
    unmount() {
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
