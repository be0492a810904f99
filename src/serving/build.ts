import type { DuckDBConnection } from '@duckdb/node-api';
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { positiveInt } from '../config.js';
import { releaseReadResults } from '../db/release.js';
import { stripComments, paramsFor, sqlText } from '../db/sql.js';
import { ENTRY_BYTES, FORMAT, MAGIC, USER_FIELDS, tripIdHash, type Footer, type Section } from './format.js';

export interface SectionBuildResult {
  file: string;
  section: Section;
  bytes: number;
  rows: number;
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

  entry(key: number, aux: number, length: number, extraLength: number, offset: number, extraOffset: number): void {
    if (this.buffer.length - this.used < ENTRY_BYTES) this.flush();
    const at = this.used;
    this.buffer.writeDoubleLE(key, at);
    this.buffer.writeUInt32LE(aux, at + 8);
    this.buffer.writeUInt32LE(length, at + 12);
    this.buffer.writeUInt32LE(extraLength, at + 16);
    this.buffer.writeUInt32LE(0, at + 20);
    this.buffer.writeDoubleLE(offset, at + 24);
    this.buffer.writeDoubleLE(extraOffset, at + 32);
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
 * Writes one section of the serving pack of the slot the connection currently uses (`use slot`)
 * to `file`: streamed from sql/serving/<section>.sql app by app (the app's zone bound as a
 * constant) and in steps of users, so memory stays flat whatever the history. The index goes to a
 * side file first and is appended after the payloads. Written to `file.tmp` and renamed, so a
 * reader never sees half a file.
 */
export async function buildSection(
  conn: DuckDBConnection, file: string, section: Section, version: number, zones: Record<string, string>, onProgress?: (message: string) => void,
): Promise<SectionBuildResult> {
  const started = performance.now();
  const tmp = `${file}.tmp`;
  const indexTmp = `${file}.index.tmp`;
  const extrasTmp = `${file}.extras.tmp`;
  const fd = openSync(tmp, 'w', 0o644);
  const indexFd = openSync(indexTmp, 'w+', 0o600);
  const extrasFd = openSync(extrasTmp, 'w+', 0o600);
  try {
    const data = new Writer(fd);
    const index = new Writer(indexFd);
    const extras = new Writer(extrasFd);
    const apps = Object.keys(zones).sort();
    const users: number[] = [];
    let rows = 0;
    const sql = stripComments(sqlText(`serving/${section}`));
    for (const [a, appId] of apps.entries()) {
      // users in buckets of about rowsPerStep() trips: each step sorts and aggregates only its own
      const [counts] = (await (await conn.runAndReadAll('select count(*)::double as n from trips where app_id = $app_id', { app_id: appId })).getRowObjectsJson()) as { n: number }[];
      const buckets = Math.max(1, Math.ceil(Number(counts?.n ?? 0) / Math.max(1, rowsPerStep())));
      for (let bucket = 0; bucket < buckets; bucket++) {
        const result = await conn.stream(sql, paramsFor(sql, { app_id: appId, zone: zones[appId] as string, buckets, bucket }));
        let lastUser = NaN;
        for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
          const [userIds, keys, tripIds, payloads, extraTexts] = chunk.getColumns() as [bigint[], number[], string[], string[], string[]];
          for (let r = 0; r < chunk.rowCount; r++) {
            const userId = Number(userIds[r]);
            // rows come ordered by user: a new user opens its run of entries
            if (userId !== lastUser) {
              users.push(a, userId, rows, 0);
              lastUser = userId;
            }
            users[users.length - 1] = (users[users.length - 1] as number) + 1;
            const offset = data.position;
            const length = data.string(payloads[r] as string);
            const extraOffset = extras.position;
            const extraLength = extras.string(extraTexts[r] as string);
            const aux = section === 'trips' ? tripIdHash(tripIds[r] as string) : section === 'scores' ? Number(tripIds[r]) : 0;
            index.entry(keys[r] as number, aux, length, extraLength, offset, extraOffset);
            rows++;
          }
        }
        // results free their native memory only when collected; a step's rows are written by now
        releaseReadResults();
      }
    }
    data.flush();
    index.flush();
    extras.flush();
    // the extras, then the index, follow the payloads
    const copy = Buffer.allocUnsafe(8 << 20);
    const append = (from: number, length: number): void => {
      for (let at = 0; at < length; ) {
        const n = readSync(from, copy, 0, Math.min(copy.length, length - at), at);
        data.bytes(copy.subarray(0, n));
        at += n;
      }
    };
    const extrasOffset = data.position;
    append(extrasFd, extras.position);
    const indexOffset = data.position;
    append(indexFd, index.position);
    const footer: Footer = { format: FORMAT, section, version, zones, indexOffset, extrasOffset, count: rows, apps, users };
    const footerLength = data.string(JSON.stringify(footer));
    const tail = Buffer.alloc(4 + MAGIC.length);
    tail.writeUInt32LE(footerLength, 0);
    tail.write(MAGIC, 4, 'latin1');
    data.bytes(tail);
    data.flush();
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, file);
    const result = { file, section, bytes: data.position, rows, users: users.length / USER_FIELDS, seconds: (performance.now() - started) / 1000 };
    onProgress?.(`serving pack: ${section} written: ${rows.toLocaleString('en-US')} rows of ${result.users.toLocaleString('en-US')} users, ${(result.bytes / 2 ** 20).toFixed(1)} MiB in ${result.seconds.toFixed(1)} s`);
    return result;
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
    closeSync(extrasFd);
    rmSync(indexTmp, { force: true });
    rmSync(extrasTmp, { force: true });
  }
}
