import { DuckDBInstance } from '../../db/duckdb.js';
import { threadSetting } from '../../db/threads.js';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ConnectionPool } from '../../db/pool.js';
import { type Params, type Row, sqlText } from '../../db/sql.js';
import type { Manifest } from '../../publish/manifest.js';
import type { ServingPack, PackOptions } from '../../serving/pack.js';
import { PageCacheWarmer, type WarmState } from '../../serving/warm.js';
import { openPack, verifyExtras, type PackRefusal } from '../../serving/verified-pack.js';
import { DamagedFiles, isCorruptDatabase } from './damaged-files.js';
import { ExportReader } from '../export/export-reader.js';
import { setting } from '../../settings.js';

/** DuckDB's memory cap for each API process's snapshot (env DRIVING_API_MEMORY_LIMIT, a DuckDB size). */
const apiMemoryLimit = (): string => setting('DRIVING_API_MEMORY_LIMIT');

/** One published slot, opened read-only, with its own connections. */
export class Snapshot {
  private inFlight = 0;
  private retired = false;

  private constructor(
    readonly manifest: Manifest,
    private readonly instance: DuckDBInstance,
    private readonly pool: ConnectionPool,
    /** The publish's serving pack, verified (null: SQL only). */
    private readonly verifiedPack: ServingPack | null,
    /** Reads the pack's files into the page cache in the background (null: no pack, or warm 'none'). */
    readonly warmer: PageCacheWarmer | null,
    /** Why SQL serves although the manifest names a pack (null: the pack serves, or SQL was chosen). */
    private refused: PackRefusal | null,
    private readonly log: (line: string) => void,
    /** Where damaged files found while serving this snapshot are reported (the follower's list). */
    readonly damaged: DamagedFiles | null,
    /** The bulk export reads this slot through its own instance, with a small cache (export-reader.ts). */
    readonly exportReader: ExportReader,
  ) {}

  /** Settles when the pack's extras were verified in the background (or refused; at once without a pack). */
  extrasChecked: Promise<void> = Promise.resolve();

  private refuse(code: PackRefusal, line: string): void {
    if (this.refused) return;
    this.refused = code;
    this.log(line);
  }

  /** The serving pack the trip list, detail, statistics and score read instead of DuckDB, while it is trusted (null: SQL serves). */
  get pack(): ServingPack | null {
    return this.refused ? null : this.verifiedPack;
  }

  /** Why the pack is not used (a stable code for /readyz), or null. */
  get packRefusal(): PackRefusal | null {
    return this.refused;
  }

  /**
   * A pack read failed at request time (a short read, bytes that do not parse): the pack is not
   * used again for this snapshot, and that request and every later one are answered by SQL.
   */
  packFailed(error: unknown): void {
    this.refuse(
      'pack_read_failed',
      `serve: serving pack of ${this.manifest.slot}@${this.manifest.version} failed a read, SQL serves it from now on: ${error instanceof Error ? error.message.split('\n')[0] : String(error)} (pack_read_failed)`,
    );
  }

  static async open(
    publishedDir: string,
    manifest: Manifest,
    connections: number,
    usePack = true,
    packOptions: PackOptions = {},
    damaged: DamagedFiles | null = null,
  ): Promise<Snapshot> {
    // a new instance every time: the client's cache would hand back the previous file's instance
    // DuckDB's default cap is 80% of the machine's memory a process: with a worker per core and a
    // long export reading the snapshot's tables, each worker's cache of blocks it read grows toward
    // it. Blocks of a read-only file are dropped, not spilled, beyond the cap.
    const instance = await DuckDBInstance.create(join(publishedDir, manifest.file), {
      access_mode: 'READ_ONLY',
      memory_limit: apiMemoryLimit(),
      ...threadSetting(),
    });
    let pool: ConnectionPool | null = null;
    let pack: ServingPack | null = null;
    let refused: PackRefusal | null = null;
    try {
      pool = await ConnectionPool.open(instance, connections);
      let extras: { path: string; sha256: string }[] = [];
      if (usePack && manifest.pack)
        ({ pack, refused, extras } = await openPack(
          publishedDir,
          manifest.pack,
          packOptions,
          `${manifest.slot}@${manifest.version}`,
          damaged ?? undefined,
        ));
      // warm (SQL serving only): read each table's user_id column once before the first request needs it
      if (!pack) await pool.query(sqlText('ops/api/warm_user_ids'));
      // requests are served meanwhile: a cold read is slower, not wrong
      const warm = packOptions.warm ?? 'rows';
      const warmer = pack && warm !== 'none' ? new PageCacheWarmer(pack.files(warm === 'all')) : null;
      const snapshot = new Snapshot(
        manifest,
        instance,
        pool,
        pack,
        warmer,
        refused,
        packOptions.log ?? (() => undefined),
        damaged,
        ExportReader.forSlot(publishedDir, manifest.file),
      );
      // the extras (trip events) are verified off the request path: trip details read them from the pack once they match
      if (pack) {
        snapshot.extrasChecked = verifyExtras(pack, extras, `${manifest.slot}@${manifest.version}`, {
          log: snapshot.log,
          refuse: (code, line) => snapshot.refuse(code, line),
          damaged: damaged ?? undefined,
        });
      }
      return snapshot;
    } catch (error) {
      // a slot that cannot serve is closed at once: a held read lock would block the next publish
      pack?.close();
      pool?.close();
      instance.closeSync();
      throw error;
    }
  }

  query(sql: string, params?: Params): Promise<Row[]> {
    return this.pool.query(sql, params);
  }

  enter(): void {
    this.inFlight++;
  }

  leave(): void {
    this.inFlight--;
    if (this.retired && this.inFlight === 0) this.close();
  }

  /** No new requests; closed (and the file released for the next publish) once the last one ends. */
  retire(): void {
    this.retired = true;
    this.warmer?.stop();
    if (this.inFlight === 0) this.close();
  }

  /** How far the page cache was warmed for this snapshot ('off' without a warmer). */
  get pageCache(): WarmState | { state: 'off' } {
    return this.warmer?.state ?? { state: 'off' };
  }

  private close(): void {
    this.verifiedPack?.close();
    this.exportReader.close();
    this.pool.close();
    this.instance.closeSync();
  }
}

/**
 * Follows published/manifest.json: when it names a new slot, opens that slot read-only, warms it,
 * switches new requests to it, and closes the old one when its last request has finished. A
 * request keeps the snapshot it started with, so no response mixes two publishes.
 */
export class SnapshotFollower {
  private current: Snapshot | null = null;
  private timer: NodeJS.Timeout | null = null;
  private switching: Promise<void> | null = null;
  private lastManifestText = '';
  private failedManifestText = '';
  /** Why the newest manifest could not be served, while an older snapshot (or none) is served. */
  lastError: string | null = null;
  /** The manifest file is gone while a snapshot is served (it is kept until a publish writes one). */
  manifestMissing = false;
  private stopped = false;
  /** Published files found damaged while serving the current snapshot (listed on /readyz). */
  readonly damaged: DamagedFiles;

  constructor(
    private readonly publishedDir: string,
    private readonly manifestFile: string,
    private readonly options: {
      connections: number;
      pollMs: number;
      usePack?: boolean;
      pack?: PackOptions;
      onSwitch?: (m: Manifest) => void;
      onError?: (e: unknown) => void;
      /** One line about the manifest going missing (the pack's own lines go to pack.log). */
      log?: (line: string) => void;
      /** A snapshot's page cache warming ended (warm, failed, or stopped because it was retired). */
      onWarm?: (m: Manifest, state: WarmState) => void;
    },
  ) {
    const log = options.pack?.log ?? options.log;
    this.damaged = new DamagedFiles(publishedDir, (line) => (log ? log(line) : process.stderr.write(`${line}\n`)));
  }

  /** Never throws: a slot that cannot be opened leaves the API serving what it had (or 503). */
  async start(): Promise<void> {
    await this.refresh().catch((error) => this.options.onError?.(error));
    this.timer = setInterval(() => {
      this.refresh().catch((error) => this.options.onError?.(error));
    }, this.options.pollMs);
    this.timer.unref();
  }

  /** Runs `fn` on the current snapshot, or returns null when nothing is published yet. */
  async use<T>(fn: (snapshot: Snapshot) => Promise<T>): Promise<{ value: T } | null> {
    const snapshot = this.current;
    if (!snapshot) return null;
    snapshot.enter();
    try {
      return { value: await fn(snapshot) };
    } finally {
      snapshot.leave();
    }
  }

  get manifest(): Manifest | null {
    return this.current?.manifest ?? null;
  }

  /** How the trip list, detail, statistics and score of the current snapshot are answered, and why SQL when the manifest names a pack. */
  get serving(): { mode: 'pack' | 'sql'; refusal: PackRefusal | null } | null {
    const s = this.current;
    return s ? { mode: s.pack ? 'pack' : 'sql', refusal: s.packRefusal } : null;
  }

  /** The current snapshot's page-cache warming, or null when nothing is served. */
  get pageCache(): Snapshot['pageCache'] | null {
    return this.current?.pageCache ?? null;
  }

  /** Checks the manifest once (the poller calls this; tests may too). */
  refresh(): Promise<void> {
    this.switching ??= this.switchIfChanged().finally(() => {
      this.switching = null;
    });
    return this.switching;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.current?.retire();
    this.current = null;
  }

  private async switchIfChanged(): Promise<void> {
    if (!existsSync(this.manifestFile)) {
      // removed by hand or by a cleanup: the served snapshot is still a whole publish, so it stays
      // served; the next publish writes a manifest (into the slot no reader holds) and is switched to
      if (this.current && !this.manifestMissing) {
        this.options.log?.(
          `serve: ${basename(this.manifestFile)} is missing; still serving ${this.current.manifest.slot}@${this.current.manifest.version} until a publish writes one`,
        );
      }
      this.manifestMissing = this.current !== null;
      return;
    }
    this.manifestMissing = false;
    const text = readFileSync(this.manifestFile, 'utf8');
    // a manifest that failed is not retried until it changes (the next publish rewrites it)
    if (text === this.lastManifestText || text === this.failedManifestText) return;
    let next: Snapshot;
    let manifest: Manifest | null = null;
    try {
      manifest = JSON.parse(text) as Manifest;
      // a new publish may have rebuilt them: files still damaged are found (and listed) again
      this.damaged.clear();
      next = await Snapshot.open(
        this.publishedDir,
        manifest,
        this.options.connections,
        this.options.usePack ?? true,
        this.options.pack,
        this.damaged,
      );
    } catch (error) {
      // a slot whose blocks DuckDB refuses: named and listed like any damaged file (the next load rebuilds it)
      if (manifest && isCorruptDatabase(error))
        this.damaged.report(
          manifest.file,
          (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'corrupt',
        );
      this.failedManifestText = text;
      this.lastError = error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
      throw error;
    }
    // a running API keeps serving the previous snapshot until the new one's trip events are
    // verified too (after a publish they are mostly a small delta); at start, with nothing served
    // yet, it serves at once and answers trip details by SQL until then
    if (this.current) {
      await next.extrasChecked;
      if (this.stopped) {
        next.retire();
        return;
      }
    }
    const served = next.manifest;
    this.lastError = null;
    const previous = this.current;
    this.current = next;
    this.lastManifestText = text;
    previous?.retire();
    this.options.onSwitch?.(served);
    void next.warmer?.done.then((state) => this.options.onWarm?.(served, state));
  }
}
