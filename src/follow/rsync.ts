import { spawn } from 'node:child_process';

/** What one rsync run moved, from its `--stats` summary. */
export interface RsyncStats {
  /** Files rsync wrote (new or changed), as named by `--out-format=%n`, relative to the destination. */
  files: string[];
  /** File data sent as literal bytes: what the change cost, whatever the direction of the copy. */
  literalBytes: number;
  /** Data rsync found in the destination's basis file and did not send (its delta transfer). */
  matchedBytes: number;
  /** Bytes on the wire both ways (protocol included). */
  wireBytes: number;
}

/** rsync failed: its exit code and the last lines it wrote to stderr. */
export class RsyncError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
  ) {
    super(message);
  }
}

/** How long one rsync run may take before it is killed (a source that stops answering mid-copy). */
const RSYNC_TIMEOUT_S = 120;

/**
 * Runs `rsync` with `args` (sources and destination last) and reads its summary. Always with
 * `--stats` and `--timeout`, never with `--whole-file`: rsync copies a local path whole by default,
 * and the tests' machines are local paths whose copies must show the same delta as a remote's.
 */
export function rsync(args: string[], rsyncBinary = 'rsync'): Promise<RsyncStats> {
  const all = ['--stats', '--no-whole-file', `--timeout=${RSYNC_TIMEOUT_S}`, '--out-format=>%n', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(rsyncBinary, all, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    child.on('error', (error) => reject(new RsyncError(`rsync could not start: ${error.message}`, null)));
    child.on('close', (code) => {
      if (code !== 0) {
        const why = err.trim().split('\n').slice(-2).join('; ') || `exit ${code}`;
        reject(new RsyncError(`rsync ${code === null ? 'was killed' : `exit ${code}`}: ${why}`, code));
        return;
      }
      resolve(parseStats(out));
    });
  });
}

/** The files written and the byte counts of rsync's `--stats` output (numbers with thousands separators). */
export function parseStats(out: string): RsyncStats {
  const number = (label: string): number => {
    const match = new RegExp(`^${label}: ([\\d,.]+)`, 'm').exec(out);
    return match ? Number((match[1] as string).replace(/[,.]/g, '')) : 0;
  };
  const files = out
    .split('\n')
    .filter((line) => line.startsWith('>'))
    .map((line) => line.slice(1))
    // directories (trailing slash) are listed as rsync creates or touches them
    .filter((name) => name !== '' && !name.endsWith('/'));
  return {
    files,
    literalBytes: number('Literal data'),
    matchedBytes: number('Matched data'),
    wireBytes: number('Total bytes sent') + number('Total bytes received'),
  };
}

/**
 * `SOURCE` (the job machine's data folder as rsync names it: `host:/srv/driving/data`,
 * `rsync://host:port/module`, or a local path) joined with a path inside it.
 */
export function sourcePath(source: string, ...parts: string[]): string {
  return [source.replace(/\/+$/, ''), ...parts].join('/');
}
