import type { DuckDBConnection } from '@duckdb/node-api';
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { positiveInt } from '../config.js';
import { stripComments, paramsFor, sqlText } from '../db/sql.js';
import { ENTRY_BYTES, FORMAT, MAGIC, SECTIONS, USER_FIELDS, tripIdHash, type Footer, type Section } from './format.js';

export interface PackBuildResult {
  file: string;
  bytes: number;
  rows: Record<Section, number>;
  users: number;
  seconds: number;
}

/** Trips per build step (env DRIVING_SERVING_PACK_STEP_ROWS; tests make it tiny to cross steps). */
const rowsPerStep = (): number => positiveInt(process.env['DRIVING_SERVING_PACK_STEP_ROWS'], 250_000, 'DRIVING_SERVING_PACK_STEP_ROWS');

/** Appends bytes to a file through an 8 MiB buffer; `position` is where the next byte lands. */
class Writer {
  private readonly buffer = Buffer.allocUnsafe(8 << 20);
  private used = 0;
  position = 0;

  constructor(private readonly fd: number) {}

  string(text: string): number {
    const bytes = Buffer.byteLength(text);
    if (bytes > this.buffer.length - this.used) this.flush();
    if (bytes > this.buffer.length) {
      writeSync(this.fd, text);
    } else {
      this.buffer.write(text, this.used);
      this.used += bytes;
    }
    this.position += bytes;
    return bytes;
  }

  entry(key: number, aux: number, length: number, extraLength: number, offset: number): void {
    if (this.buffer.length - this.used < ENTRY_BYTES) this.flush();
    const at = this.used;
    this.buffer.writeDoubleLE(key, at);
    this.buffer.writeUInt32LE(aux, at + 8);
    this.buffer.writeUInt32LE(length, at + 12);
    this.buffer.writeUInt32LE(extraLength, at + 16);
    this.buffer.writeUInt32LE(0, at + 20);
    this.buffer.writeDoubleLE(offset, at + 24);
    this.used += ENTRY_BYTES;
    this.position += ENTRY_BYTES;
  }

  bytes(data: Buffer): void {
    if (data.length > this.buffer.length - this.used) this.flush();
    if (data.length > this.buffer.length) {
      writeSync(this.fd, data);
    } else {
      data.copy(this.buffer, this.used);
      this.used += data.length;
    }
    this.position += data.length;
  }

  flush(): void {
    let done = 0;
    while (done < this.used) done += writeSync(this.fd, this.buffer, done, this.used - done);
    this.used = 0;
  }
}

/**
 * Writes the serving pack of the slot the connection currently uses (`use slot`) to `file`:
 * streamed from sql/serving/*.sql, so memory stays flat whatever the history. The index goes to a
 * side file first and is appended after the payloads. Written to `file.tmp` and renamed, so a
 * reader never sees half a pack.
 */
export async function buildPack(
  conn: DuckDBConnection, file: string, version: number, zones: Record<string, string>, onProgress?: (message: string) => void,
): Promise<PackBuildResult> {
  const started = performance.now();
  const tmp = `${file}.tmp`;
  const indexTmp = `${file}.index.tmp`;
  const fd = openSync(tmp, 'w', 0o644);
  const indexFd = openSync(indexTmp, 'w+', 0o600);
  try {
    const data = new Writer(fd);
    const index = new Writer(indexFd);
    const apps: string[] = [];
    const appIndex = new Map<string, number>();
    const users = new Map<string, number[]>();
    const rows = { trips: 0, stats: 0, scores: 0 } as Record<Section, number>;
    // users in buckets of about rowsPerStep() trips: each step sorts and aggregates only its own
    // (one query over 5 M trips and 32 M events ran out of a 3 GB memory limit)
    const [counts] = (await (await conn.runAndReadAll('select count(*)::double as n from trips')).getRowObjectsJson()) as { n: number }[];
    const buckets = Math.max(1, Math.ceil(Number(counts?.n ?? 0) / Math.max(1, rowsPerStep())));
    for (const [s, section] of SECTIONS.entries()) {
      for (let bucket = 0; bucket < buckets; bucket++) {
        const sql = stripComments(sqlText(`serving/${section}`));
        const result = await conn.stream(sql, paramsFor(sql, { buckets, bucket }));
        for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
          const [appIds, userIds, keys, tripIds, payloads, extras] = chunk.getColumns() as [string[], bigint[], number[], string[], string[], string[]];
          for (let r = 0; r < chunk.rowCount; r++) {
            const appId = appIds[r] as string;
            const userId = Number(userIds[r]);
            const userKey = `${appId}\u0000${userId}`;
            let user = users.get(userKey);
            if (!user) {
              let a = appIndex.get(appId);
              if (a === undefined) {
                a = apps.length;
                apps.push(appId);
                appIndex.set(appId, a);
              }
              user = new Array<number>(USER_FIELDS).fill(0);
              user[0] = a;
              user[1] = userId;
              users.set(userKey, user);
            }
            if (user[3 + 2 * s] === 0) user[2 + 2 * s] = rows[section];
            user[3 + 2 * s] = (user[3 + 2 * s] as number) + 1;
            const offset = data.position;
            const length = data.string(payloads[r] as string);
            const extraLength = data.string(extras[r] as string);
            const aux = section === 'trips' ? tripIdHash(tripIds[r] as string) : section === 'scores' ? Number(tripIds[r]) : 0;
            index.entry(keys[r] as number, aux, length, extraLength, offset);
            rows[section]++;
          }
        }
      }
      onProgress?.(`serving pack: ${section} written (${rows[section].toLocaleString('en-US')} rows)`);
    }
    data.flush();
    index.flush();
    // the index follows the payloads
    const indexStart = data.position;
    const copy = Buffer.allocUnsafe(8 << 20);
    for (let at = 0; at < index.position; ) {
      const n = readSync(indexFd, copy, 0, Math.min(copy.length, index.position - at), at);
      data.bytes(copy.subarray(0, n));
      at += n;
    }
    const sections = {} as Footer['sections'];
    let first = 0;
    for (const section of SECTIONS) {
      sections[section] = { indexOffset: indexStart + first * ENTRY_BYTES, count: rows[section] };
      first += rows[section];
    }
    const footer: Footer = { format: FORMAT, version, zones, sections, apps, users: [...users.values()].flat() };
    const footerLength = data.string(JSON.stringify(footer));
    const tail = Buffer.alloc(4 + MAGIC.length);
    tail.writeUInt32LE(footerLength, 0);
    tail.write(MAGIC, 4, 'latin1');
    data.bytes(tail);
    data.flush();
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, file);
    return { file, bytes: data.position, rows, users: users.size, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(tmp, { force: true });
    throw error;
  } finally {
    closeSync(indexFd);
    rmSync(indexTmp, { force: true });
  }
}
