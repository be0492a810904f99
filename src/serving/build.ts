import type { DuckDBConnection } from '@duckdb/node-api';
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { setting } from '../settings.js';
import { grouped } from '../progress.js';
import { query, stripComments, paramsFor, sqlText } from '../db/sql.js';
import { textPieces, type TextPieces } from '../db/vector-read.js';
import { visibleRows, type SectionFile } from './pack.js';
import { MAX_BUFFER_BYTES, Writer } from './build-writer.js';
import { EXTRAS_SUFFIX, MAGIC, SECTION_FORMAT, USER_FIELDS, tripIdHash, type Footer, type Section } from './format.js';

export interface SectionBuildResult {
  file: string;
  section: Section;
  bytes: number;
  rows: number;
  /** Rows copied from older layers (a merge) rather than written from SQL. */
  copied: number;
  users: number;
  seconds: number;
  /** SHA-256 (hex) of the section file and of its extras file, computed while writing them. */
  sha256: { file: string; extras: string };
}

/** Trips per build step (env DRIVING_SERVING_PACK_STEP_ROWS; tests make it tiny to cross steps). */
const rowsPerStep = (): number => setting('DRIVING_SERVING_PACK_STEP_ROWS');

/**
 * Writes one section file: rows arrive grouped by user (`emit`), payloads go to the file, extras
 * to `file.extras`, index entries to a side file appended after the payloads with the footer.
 * Written as temp files and renamed (the extras first), so a reader never sees half a file.
 */
class SectionWriter {
  private readonly tmp: string;
  private readonly indexTmp: string;
  private readonly extrasTmp: string;
  private readonly fd: number;
  private readonly indexFd: number;
  private readonly extrasFd: number;
  private readonly data: Writer;
  private readonly index: Writer;
  private readonly extras: Writer;
  private readonly users: number[] = [];
  private lastApp = NaN;
  private lastUser = NaN;
  rows = 0;
  /** The distinct keys written, when the footer lists them (scores: evaluation days). */
  private readonly days: Set<number> | null;

  constructor(
    readonly file: string,
    listDays = false,
  ) {
    this.days = listDays ? new Set() : null;
    this.tmp = `${file}.tmp`;
    this.indexTmp = `${file}.index.tmp`;
    this.extrasTmp = `${file}${EXTRAS_SUFFIX}.tmp`;
    this.fd = openSync(this.tmp, 'w', 0o644);
    this.indexFd = openSync(this.indexTmp, 'w+', 0o600);
    this.extrasFd = openSync(this.extrasTmp, 'w', 0o644);
    this.data = new Writer(this.fd);
    this.index = new Writer(this.indexFd);
    this.extras = new Writer(this.extrasFd);
  }

  /** Appends one row of user `userId` of app index `a` (a user's rows arrive together, in the section's order). */
  emit(a: number, userId: number, key: number, aux: number, payload: Uint8Array, extra: Uint8Array): void {
    const offset = this.data.position;
    const extraOffset = this.extras.position;
    this.data.bytes(payload);
    this.extras.bytes(extra);
    this.entry(a, userId, key, aux, payload.length, extra.length, offset, extraOffset);
  }

  /** The index entry of a row whose bytes are written: counted in its user's directory entry (a user's rows arrive together). */
  private entry(
    a: number,
    userId: number,
    key: number,
    aux: number,
    length: number,
    extraLength: number,
    offset: number,
    extraOffset: number,
  ): void {
    if (userId !== this.lastUser || a !== this.lastApp) {
      this.users.push(a, userId, this.rows, 0);
      this.lastApp = a;
      this.lastUser = userId;
    }
    this.users[this.users.length - 1] = (this.users[this.users.length - 1] as number) + 1;
    this.index.entry(key, aux, length, extraLength, offset, extraOffset);
    this.days?.add(key);
    this.rows++;
  }

  /**
   * Appends `count` rows of app index `a` from one chunk of SQL (rows grouped by user, in the
   * section's order): the payloads and extras as pieces in row order (textPieces), so a run of
   * rows is one copy into the file's buffer rather than one a row.
   */
  emitRows(
    a: number,
    count: number,
    userId: (r: number) => number,
    key: (r: number) => number,
    aux: (r: number) => number,
    payloads: TextPieces,
    extras: TextPieces,
  ): void {
    let offset = this.data.position;
    let extraOffset = this.extras.position;
    for (const piece of payloads.pieces) this.data.bytes(piece);
    for (const piece of extras.pieces) this.extras.bytes(piece);
    for (let r = 0; r < count; r++) {
      const length = payloads.lengths[r] as number;
      const extraLength = extras.lengths[r] as number;
      this.entry(a, userId(r), key(r), aux(r), length, extraLength, offset, extraOffset);
      offset += length;
      extraOffset += extraLength;
    }
  }

  /** Writes index and footer, syncs, renames into place; returns the bytes written, the users and the checksums. */
  finish(footer: Omit<Footer, 'indexOffset' | 'count' | 'users'>): {
    bytes: number;
    users: number;
    sha256: { file: string; extras: string };
  } {
    this.data.flush();
    this.index.flush();
    this.extras.flush();
    fsyncSync(this.extrasFd);
    // the index follows the payloads
    const copy = Buffer.allocUnsafe(Math.max(1, Math.min(MAX_BUFFER_BYTES, this.index.position)));
    const indexOffset = this.data.position;
    for (let at = 0; at < this.index.position; ) {
      const n = readSync(this.indexFd, copy, 0, Math.min(copy.length, this.index.position - at), at);
      this.data.bytes(copy.subarray(0, n));
      at += n;
    }
    const full: Footer = {
      ...footer,
      indexOffset,
      count: this.rows,
      users: this.users,
      ...(this.days ? { days: [...this.days].sort((x, y) => x - y) } : {}),
    };
    const footerLength = this.data.string(JSON.stringify(full));
    const tail = Buffer.alloc(4 + MAGIC.length);
    tail.writeUInt32LE(footerLength, 0);
    tail.write(MAGIC, 4, 'latin1');
    this.data.bytes(tail);
    this.data.flush();
    fsyncSync(this.fd);
    renameSync(this.extrasTmp, `${this.file}${EXTRAS_SUFFIX}`);
    renameSync(this.tmp, this.file);
    return {
      bytes: this.data.position + this.extras.position,
      users: this.users.length / USER_FIELDS,
      sha256: { file: this.data.digest(), extras: this.extras.digest() },
    };
  }

  /** Closes the files; temp files left by a failure go. */
  close(): void {
    for (const fd of [this.fd, this.indexFd, this.extrasFd]) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    for (const f of [this.tmp, this.indexTmp, this.extrasTmp]) rmSync(f, { force: true });
  }
}

const describe = (r: SectionBuildResult, how: string): string =>
  `serving pack: ${r.section} ${how}: ${grouped(r.rows)} rows of ${grouped(r.users)} users, ${(r.bytes / 2 ** 20).toFixed(1)} MiB in ${r.seconds.toFixed(1)} s`;

/**
 * Writes one section of the serving pack of the slot the connection currently uses (`use slot`)
 * to `file`: streamed from sql/models/serving/pack_<section>.sql app by app (the app's zone bound as a
 * constant) and in steps of users, so memory stays flat whatever the history.
 *
 * With `since` (a delta layer): only the rows written after version `since`, and `purgedUsers` (by
 * app: those purged after it, src/serving/scrub.ts purgedSince) marked as purged. Without it: every
 * row (a base).
 */
export async function buildSection(
  conn: DuckDBConnection,
  file: string,
  section: Section,
  version: number,
  zones: Record<string, string>,
  onProgress?: (message: string) => void,
  since?: number,
  purgedUsers: ReadonlyMap<string, ReadonlySet<number>> = new Map(),
): Promise<SectionBuildResult> {
  const started = performance.now();
  const writer = new SectionWriter(file, section === 'scores');
  try {
    const apps = Object.keys(zones).sort();
    const purged: number[] = [];
    const sql = stripComments(sqlText(`models/serving/pack_${section}`));
    for (const [a, appId] of apps.entries()) {
      const params = { app_id: appId, zone: zones[appId] as string, since: since ?? -1 };
      // users in buckets of about rowsPerStep() trips: each step sorts and aggregates only its own
      const [counts] = await query(conn, sqlText('ops/serving/step_rows'), {
        app_id: appId,
        since: since ?? -1,
        section,
      });
      const buckets = Math.max(1, Math.ceil(Number(counts?.['n'] ?? 0) / Math.max(1, rowsPerStep())));
      // a delta layer of an app with nothing new: the section query (the costliest statement of a
      // small publish) would return no row
      const steps = since !== undefined && counts?.['any_rows'] === false ? 0 : buckets;
      for (let bucket = 0; bucket < steps; bucket++) {
        const result = await conn.stream(sql, paramsFor(sql, { ...params, buckets, bucket }));
        for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
          const count = chunk.rowCount; // a native call per read
          const [userIds, keys, tripIds] = [0, 1, 2].map((c) => chunk.getColumnValues(c)) as [
            bigint[],
            number[],
            (string | number)[],
          ];
          // the payloads as DuckDB's UTF-8 bytes, written as they are (read within this chunk's life):
          // made strings, they were decoded only to be encoded again
          const payloads = textPieces(chunk.getColumnVector(3), count);
          const extras = textPieces(chunk.getColumnVector(4), count);
          for (let r = 0; r < count; r++) {
            // a NULL is a broken section query: a row the reader could not parse is never written
            if ((payloads.lengths[r] as number) < 0 || (extras.lengths[r] as number) < 0)
              throw new Error(
                `sql/models/serving/pack_${section}.sql gave a NULL payload or extra for user ${String(userIds[r])}`,
              );
          }
          const aux =
            section === 'trips'
              ? (r: number) => tripIdHash(tripIds[r] as string)
              : section === 'scores'
                ? (r: number) => Number(tripIds[r])
                : () => 0;
          writer.emitRows(
            a,
            count,
            (r) => Number(userIds[r]),
            (r) => keys[r] as number,
            aux,
            payloads,
            extras,
          );
        }
      }
      for (const u of [...(purgedUsers.get(appId) ?? [])].sort((x, y) => x - y)) purged.push(a, u);
    }
    const result = finishBuild(writer, file, section, { version, zones, apps, purged }, false, started);
    onProgress?.(describe(result, since === undefined ? 'written' : `delta since version ${since} written`));
    return result;
  } finally {
    writer.close();
  }
}

/** Ends a section file (index, footer, sync, rename) and says what was written; `copied`: its rows came from older layers. */
function finishBuild(
  writer: SectionWriter,
  file: string,
  section: Section,
  footer: Pick<Footer, 'version' | 'zones' | 'apps' | 'purged'>,
  copied: boolean,
  started: number,
): SectionBuildResult {
  const { bytes, users, sha256 } = writer.finish({ format: SECTION_FORMAT[section], section, ...footer });
  return {
    file,
    section,
    bytes,
    rows: writer.rows,
    copied: copied ? writer.rows : 0,
    users,
    seconds: (performance.now() - started) / 1000,
    sha256,
  };
}

/**
 * Merges layers (`files`, newest first) into one file: every user's rows as the API sees them
 * through those layers, copied as bytes (no SQL, no formatting). A merge that takes in the base
 * (`base`) has nothing below it, so it drops the purge marks; a merge of deltas keeps them, for
 * the layers below. Users `skip` names are left out (a layer rewritten without purged users).
 */
export function mergeLayers(
  files: SectionFile[],
  file: string,
  section: Section,
  version: number,
  zones: Record<string, string>,
  base: boolean,
  onProgress?: (message: string) => void,
  skip?: (appId: string, userId: number) => boolean,
): SectionBuildResult {
  const started = performance.now();
  const writer = new SectionWriter(file, section === 'scores');
  try {
    const apps = Object.keys(zones).sort();
    const purged: number[] = [];
    for (const [a, appId] of apps.entries()) {
      const users = new Set<number>();
      for (const f of files) for (const u of f.usersOf(appId)) users.add(u);
      for (const userId of [...users].sort((x, y) => x - y)) {
        if (skip?.(appId, userId)) continue;
        const rows = visibleRows(files, section, appId, userId);
        const bytes = new Map<number, ReturnType<SectionFile['userRows']>>();
        for (let n = 0; n < rows.count; n++) {
          const l = rows.layer[n] as number;
          let layerRows = bytes.get(l);
          if (!layerRows) {
            layerRows = (rows.files[l] as SectionFile).userRows(appId, userId);
            bytes.set(l, layerRows);
          }
          const row = layerRows[rows.index[n] as number] as (typeof layerRows)[number];
          writer.emit(a, userId, row.key, row.aux, row.payloadBytes(), row.extraBytes());
        }
      }
      if (!base) {
        const marks = new Set<number>();
        for (const f of files) for (const u of f.usersOf(appId, true)) marks.add(u);
        for (const u of [...marks].sort((x, y) => x - y)) purged.push(a, u);
      }
    }
    const result = finishBuild(writer, file, section, { version, zones, apps, purged }, true, started);
    onProgress?.(describe(result, `${files.length} layers merged${base ? ' into a new base' : ''}`));
    return result;
  } finally {
    writer.close();
  }
}
