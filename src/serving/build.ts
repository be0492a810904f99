import type { DuckDBConnection } from '@duckdb/node-api';
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { positiveInt } from '../config.js';
import { stripComments, paramsFor, sqlText } from '../db/sql.js';
import { basename } from 'node:path';
import { SectionFile, type OldRow } from './pack.js';
import { ENTRY_BYTES, EXTRAS_SUFFIX, FORMAT, MAGIC, USER_FIELDS, tripIdHash, utf8Less, type Footer, type Section } from './format.js';

export interface SectionBuildResult {
  file: string;
  section: Section;
  bytes: number;
  rows: number;
  /** Rows copied from the previous file rather than written from SQL. */
  copied: number;
  users: number;
  seconds: number;
}

interface NewTrip {
  key: number;
  tripId: string;
  payload: string;
  extra: string;
}

/** What changed in one app since the previous file: rewritten trips by user, and purged users. */
async function changedTrips(conn: DuckDBConnection, appId: string): Promise<{ trips: Map<number, Set<string>>; purged: Set<number> }> {
  const trips = new Map<number, Set<string>>();
  for (const row of (await (await conn.runAndReadAll('select user_id::double as u, trip_id from serving_changed where app_id = $app_id', { app_id: appId })).getRows())) {
    const userId = Number(row[0]);
    let set = trips.get(userId);
    if (!set) trips.set(userId, (set = new Set()));
    set.add(String(row[1]));
  }
  const purged = new Set((await (await conn.runAndReadAll('select user_id::double from serving_purged where app_id = $app_id', { app_id: appId })).getRows()).map((r) => Number(r[0])));
  return { trips, purged };
}

/** Old and new rows of one user, each newest first, merged newest first (start desc, trip id desc in UTF-8 bytes, as DuckDB orders). */
function mergeNewestFirst(kept: OldRow[], fresh: NewTrip[]): (OldRow | NewTrip)[] {
  const out: (OldRow | NewTrip)[] = [];
  let i = 0;
  let j = 0;
  while (i < kept.length || j < fresh.length) {
    const o = kept[i];
    const n = fresh[j];
    const takeOld = o !== undefined && (n === undefined || o.key > n.key || (o.key === n.key && utf8Less(n.tripId, o.tripId())));
    if (takeOld) {
      out.push(o as OldRow);
      i++;
    } else {
      out.push(n as NewTrip);
      j++;
    }
  }
  return out;
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

/** The trips file of the served manifest, to copy unchanged trips from (see buildSection). */
export interface PreviousTrips {
  file: string;
  /** The version that file is valid for: trips written after it are rebuilt, the rest copied. */
  since: number;
}

/**
 * Writes one section of the serving pack of the slot the connection currently uses (`use slot`)
 * to `file`: streamed from sql/serving/<section>.sql app by app (the app's zone bound as a
 * constant) and in steps of users, so memory stays flat whatever the history. The extras go to
 * their own file (`file.extras`); the index goes to a side file first and is appended after the
 * payloads. Written as temp files and renamed (the extras first), so a reader never sees half a
 * file.
 *
 * With `previous` (trips only), the trips written since `previous.since` come from SQL and every
 * other trip is copied as bytes from the previous file: formatting a trip and its events in DuckDB
 * costs 30-45 µs, copying it about 10 µs (measured: 1.36 M trips copied in 13.8 s), so a day's
 * load pays a copy of the history, not its formatting.
 * Needs the temp tables serving_changed (app_id, user_id, trip_id) and serving_purged (app_id,
 * user_id) of what changed since then (publish.ts makes them).
 */
export async function buildSection(
  conn: DuckDBConnection, file: string, section: Section, version: number, zones: Record<string, string>,
  onProgress?: (message: string) => void, previous?: PreviousTrips,
): Promise<SectionBuildResult> {
  const started = performance.now();
  const tmp = `${file}.tmp`;
  const indexTmp = `${file}.index.tmp`;
  const extrasFile = `${file}${EXTRAS_SUFFIX}`;
  const extrasTmp = `${extrasFile}.tmp`;
  const fd = openSync(tmp, 'w', 0o644);
  const indexFd = openSync(indexTmp, 'w+', 0o600);
  const extrasFd = openSync(extrasTmp, 'w', 0o644);
  const old = previous ? SectionFile.open(previous.file, 'trips') : null;
  try {
    const data = new Writer(fd);
    const index = new Writer(indexFd);
    const extras = new Writer(extrasFd);
    const apps = Object.keys(zones).sort();
    const users: number[] = [];
    let rows = 0;
    let copied = 0;
    let lastUser = NaN;
    /** Appends one row of user `userId` (rows arrive grouped by user, in the section's order). */
    const emit = (a: number, userId: number, key: number, aux: number, payload: string | Buffer, extra: string | Buffer): void => {
      if (userId !== lastUser) {
        users.push(a, userId, rows, 0);
        lastUser = userId;
      }
      users[users.length - 1] = (users[users.length - 1] as number) + 1;
      const offset = data.position;
      const length = typeof payload === 'string' ? data.string(payload) : (data.bytes(payload), payload.length);
      const extraOffset = extras.position;
      const extraLength = typeof extra === 'string' ? extras.string(extra) : (extras.bytes(extra), extra.length);
      index.entry(key, aux, length, extraLength, offset, extraOffset);
      rows++;
    };
    const sql = stripComments(sqlText(`serving/${section}`));
    for (const [a, appId] of apps.entries()) {
      const params = { app_id: appId, zone: zones[appId] as string, only_changed: old !== null };
      // users in buckets of about rowsPerStep() rows to write from SQL: each step sorts and aggregates only its own
      const [counts] = (await (await conn.runAndReadAll(
        old ? 'select count(*)::double as n from serving_changed where app_id = $app_id' : 'select count(*)::double as n from trips where app_id = $app_id', { app_id: appId },
      )).getRowObjectsJson()) as { n: number }[];
      const buckets = Math.max(1, Math.ceil(Number(counts?.n ?? 0) / Math.max(1, rowsPerStep())));
      const changed = old ? await changedTrips(conn, appId) : null;
      for (let bucket = 0; bucket < buckets; bucket++) {
        const result = await conn.stream(sql, paramsFor(sql, { ...params, buckets, bucket }));
        if (!old || !changed) {
          for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
            const [userIds, keys, tripIds, payloads, extraTexts] = chunk.getColumns() as [bigint[], number[], string[], string[], string[]];
            for (let r = 0; r < chunk.rowCount; r++) {
              const aux = section === 'trips' ? tripIdHash(tripIds[r] as string) : section === 'scores' ? Number(tripIds[r]) : 0;
              emit(a, Number(userIds[r]), keys[r] as number, aux, payloads[r] as string, extraTexts[r] as string);
            }
          }
        } else {
          // the step's new rows by user, then every user of the step in id order: old rows that
          // were not rewritten, merged with the new ones (start desc, trip id desc)
          const fresh = new Map<number, NewTrip[]>();
          for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
            const [userIds, keys, tripIds, payloads, extraTexts] = chunk.getColumns() as [bigint[], number[], string[], string[], string[]];
            for (let r = 0; r < chunk.rowCount; r++) {
              const userId = Number(userIds[r]);
              let list = fresh.get(userId);
              if (!list) fresh.set(userId, (list = []));
              list.push({ key: keys[r] as number, tripId: tripIds[r] as string, payload: payloads[r] as string, extra: extraTexts[r] as string });
            }
          }
          const stepUsers = new Set<number>(fresh.keys());
          for (const userId of old.usersOf(appId)) if (userId % buckets === bucket && !changed.purged.has(userId)) stepUsers.add(userId);
          for (const userId of [...stepUsers].sort((x, y) => x - y)) {
            // a rewritten trip is recognised by its id's hash first, so only candidates are parsed
            const ids = changed.trips.get(userId);
            const hashes = ids ? new Set([...ids].map(tripIdHash)) : null;
            const kept = old.userRows(appId, userId).filter((row) => !(hashes?.has(row.aux) && ids?.has(row.tripId())));
            copied += kept.length;
            for (const row of mergeNewestFirst(kept, fresh.get(userId) ?? [])) {
              if ('payload' in row) emit(a, userId, row.key, tripIdHash(row.tripId), row.payload, row.extra);
              else emit(a, userId, row.key, row.aux, row.payloadBytes(), row.extraBytes());
            }
          }
        }
      }
    }
    data.flush();
    index.flush();
    extras.flush();
    fsyncSync(extrasFd);
    // the index follows the payloads
    const copy = Buffer.allocUnsafe(8 << 20);
    const append = (from: number, length: number): void => {
      for (let at = 0; at < length; ) {
        const n = readSync(from, copy, 0, Math.min(copy.length, length - at), at);
        data.bytes(copy.subarray(0, n));
        at += n;
      }
    };
    const indexOffset = data.position;
    append(indexFd, index.position);
    const footer: Footer = { format: FORMAT, section, version, zones, indexOffset, count: rows, apps, users };
    const footerLength = data.string(JSON.stringify(footer));
    const tail = Buffer.alloc(4 + MAGIC.length);
    tail.writeUInt32LE(footerLength, 0);
    tail.write(MAGIC, 4, 'latin1');
    data.bytes(tail);
    data.flush();
    fsyncSync(fd);
    closeSync(fd);
    renameSync(extrasTmp, extrasFile);
    renameSync(tmp, file);
    const result = { file, section, bytes: data.position + extras.position, rows, copied, users: users.length / USER_FIELDS, seconds: (performance.now() - started) / 1000 };
    const how = old ? ` (${copied.toLocaleString('en-US')} copied from ${basename(old.name)})` : '';
    onProgress?.(`serving pack: ${section} written: ${rows.toLocaleString('en-US')} rows${how} of ${result.users.toLocaleString('en-US')} users, ${(result.bytes / 2 ** 20).toFixed(1)} MiB in ${result.seconds.toFixed(1)} s`);
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
    old?.close();
    closeSync(indexFd);
    closeSync(extrasFd);
    rmSync(indexTmp, { force: true });
    rmSync(extrasTmp, { force: true });
  }
}
