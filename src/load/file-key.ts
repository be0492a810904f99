import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';

/**
 * SHA-256 of a file's bytes: the ledger key that makes loading the same file twice a no-op.
 * A gzip file is also decompressed on the way (and the output dropped): DuckDB reads a truncated
 * gzip as a shorter file without complaint, so integrity is checked here.
 */
export async function fileKey(path: string): Promise<string> {
  const hash = createHash('sha256');
  const source = createReadStream(path, { highWaterMark: 1 << 20 });
  source.on('data', (chunk) => hash.update(chunk as Buffer));
  if (/\.gz$/i.test(path)) {
    const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
    await pipeline(source, createGunzip(), sink).catch((error: Error) => {
      throw new Error(`${path} is not a complete gzip file (${error.message})`);
    });
  } else {
    await pipeline(source, new Writable({ write: (_chunk, _encoding, done) => done() }));
  }
  return hash.digest('hex');
}
