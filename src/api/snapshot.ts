import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConnectionPool } from '../db/pool.js';
import type { Params, Row } from '../db/sql.js';
import type { Manifest } from '../publish/manifest.js';
import { ServingPack, type PackOptions } from '../serving/pack.js';
import { PageCacheWarmer, type WarmState } from '../serving/warm.js';

/**
 * The manifest's serving pack, or null (SQL serves) when it cannot be read: a pack written by an
 * older version of the service, until the next publish writes one in this format.
 */
async function openPack(publishedDir: string, files: Parameters<typeof ServingPack.open>[1], options: PackOptions): Promise<ServingPack | null> {
  let pack: ServingPack | null = null;
  try {
    pack = ServingPack.open(publishedDir, files, options);
    await pack.hold();
    return pack;
  } catch (error) {
    pack?.close();
    process.emitWarning(`serving pack not used, SQL serves this snapshot: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}

/** One published slot, opened read-only, with its own connections. */
export class Snapshot {
  private inFlight = 0;
  private retired = false;

  private constructor(
    readonly manifest: Manifest,
    private readonly instance: DuckDBInstance,
    private readonly pool: ConnectionPool,
    /** The publish's serving pack: operations 1-4 read it instead of DuckDB (null: SQL only). */
    readonly pack: ServingPack | null,
    /** Reads the pack's files into the page cache in the background (null: no pack, or warm 'none'). */
    readonly warmer: PageCacheWarmer | null,
  ) {}

  static async open(publishedDir: string, manifest: Manifest, connections: number, usePack = true, packOptions: PackOptions = {}): Promise<Snapshot> {
    // a new instance every time: the client's cache would hand back the previous file's instance
    const instance = await DuckDBInstance.create(join(publishedDir, manifest.file), { access_mode: 'READ_ONLY' });
    let pool: ConnectionPool | null = null;
    let pack: ServingPack | null = null;
    try {
      pool = await ConnectionPool.open(instance, connections);
      if (usePack && manifest.pack) pack = await openPack(publishedDir, manifest.pack.files, packOptions);
      // warm (SQL serving only): read each table's user_id column once before the first request needs it
      if (!pack) {
        for (const table of ['trips', 'trip_events', 'stats_daily', 'safety_scores']) {
          await pool.query(`select count(*) from ${table} where user_id = 0`);
        }
      }
      // requests are served meanwhile: a cold read is slower, not wrong
      const warm = packOptions.warm ?? 'rows';
      const warmer = pack && warm !== 'none' ? new PageCacheWarmer(pack.files(warm === 'all')) : null;
      return new Snapshot(manifest, instance, pool, pack, warmer);
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
    this.pack?.close();
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

  constructor(
    private readonly publishedDir: string,
    private readonly manifestFile: string,
    private readonly options: {
      connections: number; pollMs: number; usePack?: boolean; pack?: PackOptions;
      onSwitch?: (m: Manifest) => void; onError?: (e: unknown) => void;
      /** A snapshot's page cache warming ended (warm, failed, or stopped because it was retired). */
      onWarm?: (m: Manifest, state: WarmState) => void;
    },
  ) {}

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
    if (this.timer) clearInterval(this.timer);
    this.current?.retire();
    this.current = null;
  }

  private async switchIfChanged(): Promise<void> {
    if (!existsSync(this.manifestFile)) return;
    const text = readFileSync(this.manifestFile, 'utf8');
    // a manifest that failed is not retried until it changes (the next publish rewrites it)
    if (text === this.lastManifestText || text === this.failedManifestText) return;
    let next: Snapshot;
    try {
      const manifest = JSON.parse(text) as Manifest;
      next = await Snapshot.open(this.publishedDir, manifest, this.options.connections, this.options.usePack ?? true, this.options.pack);
    } catch (error) {
      this.failedManifestText = text;
      this.lastError = error instanceof Error ? error.message.split('\n')[0] ?? error.message : String(error);
      throw error;
    }
    const manifest = next.manifest;
    this.lastError = null;
    const previous = this.current;
    this.current = next;
    this.lastManifestText = text;
    previous?.retire();
    this.options.onSwitch?.(manifest);
    void next.warmer?.done.then((state) => this.options.onWarm?.(manifest, state));
  }
}
