import type { DuckDBConnection } from '@duckdb/node-api';
import { DuckDBInstance } from './duckdb.js';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { sqlText, TRACE } from './sql.js';
import { duckdbThreads } from './threads.js';
import { lockWaitReporter } from './lock-waits.js';

export interface OpenOptions {
  readOnly?: boolean;
  /** How long to keep retrying while another process holds a conflicting lock. */
  lockWaitMs?: number;
  memoryLimit?: string;
  threads?: number;
  /** Told, at the first refusal and then every few seconds, who holds the file while we wait. */
  onWait?: (message: string) => void;
}

/** How often a wait is reported again (the first report comes at once). */
export const WAIT_REPORT_EVERY_MS = 5_000;

export interface Database {
  instance: DuckDBInstance;
  connection: DuckDBConnection;
  path: string;
  close(): void;
}

const LOCK_ERROR = /Could not set lock|Conflicting lock/i;

/**
 * Opens a DuckDB file (or ':memory:') with the session pinned to UTC, so SQL never depends on the
 * machine's zone. A fresh instance every time: the client's cache would hand back a stale one.
 *
 * @example const db = await openDatabase('data/warehouse/warehouse.duckdb'); db.close();
 */
export async function openDatabase(path: string, options: OpenOptions = {}): Promise<Database> {
  if (path !== ':memory:' && !options.readOnly) mkdirSync(dirname(path), { recursive: true });
  const settings: Record<string, string> = {};
  if (options.readOnly) settings['access_mode'] = 'READ_ONLY';
  if (options.memoryLimit) settings['memory_limit'] = options.memoryLimit;
  const threads = options.threads ?? duckdbThreads();
  if (threads) settings['threads'] = String(threads);
  const deadline = Date.now() + (options.lockWaitMs ?? 0);
  const onWait = options.onWait ?? lockWaitReporter();
  let reportedAt = -Infinity;
  let queued: string | null = null;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        return await openOnce(path, settings);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (!LOCK_ERROR.test(message)) throw error;
        // a holder that lets waiting processes in between its batches (the continuous load) is
        // waited for as long as its batch in hand lasts: it gives way when that batch ends
        const givingWay = holderGivesWay(path, message);
        if (Date.now() >= deadline && !givingWay) throw new DatabaseBusyError(path, message);
        // said where a process that holds the file often (load.js --watch) looks before it takes it again
        queued ??= joinQueue(path);
        if (onWait && Date.now() - reportedAt >= WAIT_REPORT_EVERY_MS) {
          reportedAt = Date.now();
          onWait(
            givingWay
              ? `waiting for ${describeHolder(message)} holding ${path} to end its batch: it lets a waiting job in between batches`
              : `waiting for ${describeHolder(message)} holding ${path} (gives up in ${Math.ceil((deadline - Date.now()) / 1000)} s, then exits 3)`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 500)));
      }
    }
  } finally {
    if (queued !== null) rmSync(queued, { force: true });
  }
}

/**
 * The folder where processes waiting for a database file say so: one empty file per waiting
 * process, named by its PID. DuckDB's lock has no queue, so a process that closes the file and takes
 * it again at once (the continuous load, between its batches) would otherwise win every time over
 * one that retries with a back-off.
 */
const queueOf = (path: string): string => join(dirname(path), `.${basename(path)}.waiting`);

function joinQueue(path: string): string | null {
  try {
    const dir = queueOf(path);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, String(process.pid));
    writeFileSync(file, '');
    return file;
  } catch {
    // a read-only folder: the wait goes on without a place in the queue
    return null;
  }
}

/** Where a process that gives way to waiting processes between its batches says so, by PID. */
const givingWayOf = (path: string): string => join(dirname(path), `.${basename(path)}.gives-way`);

/**
 * Says, until the returned function is called (or the process ends), that this process holds
 * `path` a batch at a time and lets every process waiting for it in between batches
 * (`processesWaitingFor`): a waiting job then waits past its own limit while a batch lasts.
 */
export function announceGivingWay(path: string): () => void {
  const file = join(givingWayOf(path), String(process.pid));
  try {
    mkdirSync(givingWayOf(path), { recursive: true, mode: 0o700 });
    writeFileSync(file, '');
  } catch {
    // a read-only folder: waiting jobs keep their own limit
    return () => undefined;
  }
  return () => rmSync(file, { force: true });
}

/** Whether the process DuckDB names as holding `path` is a live one that gives way between batches. */
function holderGivesWay(path: string, lockMessage: string): boolean {
  const pid = Number(/\(PID (\d+)\)/.exec(lockMessage)?.[1]);
  if (!Number.isInteger(pid) || pid === process.pid) return false;
  const file = join(givingWayOf(path), String(pid));
  if (!existsSync(file)) return false;
  if (isAlive(pid)) return true;
  // a process that ended without a word (killed): its mark goes
  rmSync(file, { force: true });
  return false;
}

/**
 * Other live processes waiting for `path` (their PIDs), from the queue `openDatabase` keeps; the
 * entries of processes that have ended are removed.
 */
export function processesWaitingFor(path: string): number[] {
  const dir = queueOf(path);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const waiting: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (isAlive(pid)) waiting.push(pid);
    else rmSync(join(dir, name), { force: true });
  }
  return waiting;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function openOnce(path: string, settings: Record<string, string>): Promise<Database> {
  const instance = await DuckDBInstance.create(path, settings);
  const connection = await instance.connect();
  // ICU is built in but loads on first use; the zone is set once it is there.
  await connection.run(sqlText('ops/db/time_zone_utc'));
  return {
    instance,
    connection,
    path,
    close() {
      const started = performance.now();
      connection.closeSync();
      // closing writes a checkpoint: traced too, as it can be the slow step of a job
      instance.closeSync();
      if (TRACE) process.stderr.write(`close ${((performance.now() - started) / 1000).toFixed(3)} s: ${path}\n`);
    },
  };
}

/**
 * DuckDB names the holder as `Conflicting lock is held in /usr/bin/node (PID 6646)`; the process's
 * command line (Linux /proc) says which job that is.
 */
export function describeHolder(lockMessage: string): string {
  const match = /held in (.*?) \(PID (\d+)\)/.exec(lockMessage);
  if (!match) return 'another process';
  const pid = match[2] as string;
  let command = match[1] as string;
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
    if (args.length > 0)
      command = args
        .map((a, i) => (i === 0 ? a.split('/').pop() : a))
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 120);
  } catch {
    // not Linux, or the process just ended: the program path is all there is
  }
  return `PID ${pid} (${command})`;
}

/** Another process holds the file: DuckDB allows one writer or many readers, never both. */
export class DatabaseBusyError extends Error {
  constructor(
    readonly path: string,
    /** DuckDB's own message, which names the holder. */
    readonly detail: string,
    /** What to do about it, when the caller knows better than "try again". */
    hint = 'try again when it has finished',
  ) {
    const holder = describeHolder(detail);
    super(`${path} is in use by another process${holder === 'another process' ? '' : `, ${holder}`}; ${hint}`);
    this.name = 'DatabaseBusyError';
  }
}
