import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathsFor } from '../data-folder.js';
import { writeFileAtomic } from '../fsutil.js';
import type { Manifest } from '../publish/manifest.js';
import { copyNamed, fetchManifest, namedFiles, SourceMovedOn } from './copy.js';
import { writeFollowStatus, type FollowStatus } from './status.js';
import { verifyCopy } from './verify.js';

export interface FollowerOptions {
  /** The job machine's data folder as rsync names it. */
  source: string;
  /** This machine's data folder: its published/ is the copy the API serves. */
  dataDir: string;
  /** How often the source's manifest is checked. */
  pollMs: number;
  /**
   * How long files named only by the snapshot served before a switch are kept: the machine's API
   * processes see the new manifest within their own poll and drain their requests on the old one.
   */
  graceMs?: number;
  rsyncBinary?: string;
  log?: (line: string) => void;
  now?: () => Date;
}

/** A slot or a serving file (the names a manifest gives), or a temporary file rsync left when killed. */
const PUBLISHED_FILE = /^(slot-[ab]\.duckdb|serving-.+)$/;
const RSYNC_LEFTOVER = /^\.(slot-[ab]\.duckdb|serving-.+)\.[A-Za-z0-9]{6}$/;

/**
 * An API machine's follower (serve.js --follow): checks the job machine's published manifest every
 * `pollMs`; when it names a new publish, copies the files it names with rsync, verifies them, and
 * writes the manifest last, so that the machine's API processes switch to it as they would on the
 * job machine. Files no kept snapshot names are removed, so an erasure reaches this copy too. The
 * source unreachable, the last copy stays served; each check is written to follow/status.json.
 */
export class Follower {
  private readonly publishedDir: string;
  private readonly manifestFile: string;
  private readonly followDir: string;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** Files the snapshot served before the last switch named, and when that switch was. */
  private previous: { names: Set<string>; until: number } | null = null;
  readonly status: FollowStatus;

  constructor(private readonly options: FollowerOptions) {
    const paths = pathsFor(options.dataDir);
    this.publishedDir = paths.publishedDir;
    this.manifestFile = paths.manifestFile;
    this.followDir = join(options.dataDir, 'follow');
    this.status = {
      source: options.source,
      checkedAt: this.now().toISOString(),
      inSyncAt: null,
      lastCopy: null,
      copies: 0,
      lastError: null,
      sourceVersion: null,
      sourcePublishedAt: null,
    };
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Writes the first status, then checks at once and every pollMs; never throws. */
  start(): void {
    writeFollowStatus(this.options.dataDir, this.status);
    const tick = (): void => {
      if (this.stopped) return;
      void this.check().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.options.pollMs);
      });
    };
    tick();
  }

  /** Stops polling once the check under way (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One check of the source, and a copy when it published (tests and the bench call this too). */
  check(): Promise<void> {
    this.running ??= this.checkOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async checkOnce(): Promise<void> {
    const { source, rsyncBinary } = this.options;
    try {
      // a source that publishes while it is copied is copied again: at most a few times a check
      for (let attempt = 0; ; attempt++) {
        const text = await fetchManifest(source, this.followDir, rsyncBinary);
        const manifest = JSON.parse(text) as Manifest;
        this.status.sourceVersion = manifest.version;
        this.status.sourcePublishedAt = manifest.publishedAt;
        // in step, unless a file it names was lost here (copied again: rsync sends what is missing)
        if (text === this.localManifestText() && this.holdsEveryFile(manifest)) break;
        const started = performance.now();
        let copied: Awaited<ReturnType<typeof copyNamed>>;
        try {
          copied = await copyNamed(source, this.publishedDir, this.followDir, manifest, rsyncBinary);
        } catch (error) {
          if (error instanceof SourceMovedOn && attempt < 3) continue;
          throw error;
        }
        // the source's manifest unchanged across the copy: no file it names was written meanwhile
        // (a publish writes only the slot and serving files the served manifest does not name)
        if ((await fetchManifest(source, this.followDir, rsyncBinary)) !== text) {
          if (attempt < 3) continue;
          throw new Error('the source published again during each of 4 copies');
        }
        await verifyCopy(this.publishedDir, manifest, copied.files);
        this.switchTo(text);
        this.status.copies++;
        this.status.lastCopy = {
          at: this.now().toISOString(),
          version: manifest.version,
          publishedAt: manifest.publishedAt,
          literalBytes: copied.literalBytes,
          wireBytes: copied.wireBytes,
          files: copied.files.length,
          seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
        };
        this.options.log?.(
          `serve: follow: copied ${manifest.slot}@${manifest.version} from ${source} (${copied.files.length} files, ${copied.literalBytes} bytes of file data)`,
        );
        break;
      }
      this.status.inSyncAt = this.now().toISOString();
      if (this.status.lastError !== null) this.options.log?.(`serve: follow: ${source} answers again`);
      this.status.lastError = null;
    } catch (error) {
      const message = error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
      if (message !== this.status.lastError) this.options.log?.(`serve: follow: ${source}: ${message}`);
      this.status.lastError = message;
    }
    try {
      this.removeUnnamed();
    } catch (error) {
      this.options.log?.(
        `serve: follow: cleaning published/: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    this.status.checkedAt = this.now().toISOString();
    writeFollowStatus(this.options.dataDir, this.status);
  }

  private holdsEveryFile(manifest: Manifest): boolean {
    return namedFiles(manifest).every((name) => existsSync(join(this.publishedDir, name)));
  }

  private localManifestText(): string | null {
    return existsSync(this.manifestFile) ? readFileSync(this.manifestFile, 'utf8') : null;
  }

  /** The manifest last, in one rename: the machine's API processes switch to it by their own poll. */
  private switchTo(text: string): void {
    const old = this.localManifestText();
    if (old !== null) {
      const names = new Set(namedFiles(JSON.parse(old) as Manifest));
      this.previous = { names, until: Date.now() + (this.options.graceMs ?? 10_000) };
    }
    writeFileAtomic(this.manifestFile, text, 0o644);
  }

  /**
   * Slots and serving files that neither the served manifest nor (within the grace) the one
   * before it names, and rsync's leftovers, are removed: a purged driver's rows leave this copy
   * with the files that held them. An API process still draining an older snapshot keeps reading
   * it: an open file outlives its name.
   */
  private removeUnnamed(): void {
    const text = this.localManifestText();
    if (text === null || !existsSync(this.publishedDir)) return;
    const keep = new Set(namedFiles(JSON.parse(text) as Manifest));
    if (this.previous && Date.now() < this.previous.until) for (const name of this.previous.names) keep.add(name);
    else this.previous = null;
    for (const name of readdirSync(this.publishedDir)) {
      const path = join(this.publishedDir, name);
      if ((PUBLISHED_FILE.test(name) && !keep.has(name)) || RSYNC_LEFTOVER.test(name)) {
        if (statSync(path).isFile()) rmSync(path, { force: true });
      }
    }
  }
}
