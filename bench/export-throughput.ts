import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { RecordBatchReader } from 'apache-arrow';
import { AppStore } from '../src/apps/store.js';
import { pathsFor } from '../src/data-folder.js';
import { repoPath } from '../src/repo-root.js';
import { waitReady } from './api-server.js';

export interface ExportFigures {
  format: 'arrow' | 'ndjson';
  /** Which export of the same server process this is (1 unless `repeat`). */
  run: number;
  trips: number;
  bytes: number;
  /** Request sent to the last byte read. */
  seconds: number;
  tripsPerSecond: number;
  /** Request sent to the first byte of the body. */
  firstByteSeconds: number;
  /** The API process (`serve.js`, one worker) before the export: once ready, or after the export before it (`repeat`). */
  serverIdleRssBytes: number;
  /** The API process's peak resident set over this export (the kernel's VmHWM, started again before each export of a `repeat`), read as it ends. */
  serverPeakRssBytes: number;
  /** The reading client's (this process's) peak resident set, sampled every 20 ms. */
  clientPeakRssBytes: number;
  /** The 1-minute load average before and after: times on a shared machine are upper bounds. */
  loadAverage: [number, number];
  /** Batches the server logged (DRIVING_API_EXPORT_MEMORY_LOG, on for every run of this bench). */
  batches: number;
  /** The server's memory after batches 1, 100, 300, 600, 900 and the last (those the export has): whether RSS plateaus. */
  memoryAt: BatchMemory[];
}

/** One line of the export's memory log (src/api/export/memory-log.ts), in MiB. */
export interface BatchMemory {
  /** The export's request id (the line's `export`). */
  exportId: string;
  batch: number;
  rssMiB: number;
  heapTotalMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
  exportDuckdbMiB: number;
}

/** The batches whose memory the bench reports: early, along the plateau of a 1 M-trip export, and the last. */
export const MEMORY_BATCHES = [1, 100, 300, 600, 900];

export interface ExportBenchOptions {
  /** DRIVING_API_EXPORT_BATCH_TRIPS for the server (its default when absent). */
  batchTrips?: number;
  /** Which formats, in order (both by default). */
  formats?: ('arrow' | 'ndjson')[];
  /** The export's range (the route's `startTime`, `endTime`); the whole history when absent. */
  startTime?: string;
  endTime?: string;
  /**
   * Exports of each format one after another from the same server process (default 1): the
   * peak resident set of the later ones shows whether memory stops growing with the trips exported.
   */
  repeat?: number;
  /** Append the server's stderr here (e.g. its DRIVING_API_EXPORT_MEMORY_LOG lines). */
  serverLog?: string;
}

/**
 * Times `GET /v1/exports/trips` (the whole history, or a range) against a data folder's published snapshot, each
 * format against a fresh `serve.js` process (one worker) so its peak resident set is that
 * export's alone, read over loopback to the end as a client would (Arrow with apache-arrow's
 * streaming reader, one batch at a time; NDJSON by counting lines). A new API key is issued.
 *
 * @example await benchExport('/tmp/data') // [{ format: 'arrow', trips: 978_912, ... }, ...]
 */
export async function benchExport(dataDir: string, options: ExportBenchOptions = {}): Promise<ExportFigures[]> {
  const store = new AppStore(pathsFor(dataDir).appsFile);
  const app = (await store.list())[0];
  if (!app) throw new Error(`no app in ${dataDir}`);
  const { apiKey } = await store.rotateKey(app.appId);
  const figures: ExportFigures[] = [];
  for (const format of options.formats ?? ['arrow', 'ndjson']) {
    const server = await startServer(dataDir, options.batchTrips, options.serverLog);
    const repeat = Math.max(1, options.repeat ?? 1);
    const runs: Omit<ExportFigures, 'run' | 'batches' | 'memoryAt'>[] = [];
    try {
      for (let run = 1; run <= repeat; run++) {
        // each export's own peak: the kernel's high-water mark starts again from the RSS now
        if (run > 1) resetPeakRss(server.pid);
        runs.push(await timeExport(server, apiKey, format, rangeQuery(options)));
      }
    } finally {
      // stopped first: the last batch's line may still be on its way when the client has read the end
      await server.stop();
    }
    // each export's memory lines by its id, in the order the exports ran
    const byExport = new Map<string, BatchMemory[]>();
    for (const line of server.memoryLines()) {
      const lines = byExport.get(line.exportId) ?? [];
      lines.push(line);
      byExport.set(line.exportId, lines);
    }
    const groups = [...byExport.values()];
    for (const [index, timed] of runs.entries()) {
      const lines = groups[index] ?? [];
      const last = lines[lines.length - 1];
      figures.push({
        ...timed,
        run: index + 1,
        batches: lines.length,
        memoryAt: lines.filter((l) => MEMORY_BATCHES.includes(l.batch) || l === last),
      });
    }
  }
  return figures;
}

function rangeQuery(options: ExportBenchOptions): string {
  const query = new URLSearchParams();
  if (options.startTime) query.set('startTime', options.startTime);
  if (options.endTime) query.set('endTime', options.endTime);
  return query.size > 0 ? `?${query}` : '';
}

async function timeExport(
  server: Server,
  apiKey: string,
  format: 'arrow' | 'ndjson',
  range: string,
): Promise<Omit<ExportFigures, 'run' | 'batches' | 'memoryAt'>> {
  global.gc?.();
  const loadBefore = loadavg()[0] as number;
  const serverIdleRssBytes = procStatusBytes(server.pid, 'VmRSS');
  let clientPeak = process.memoryUsage().rss;
  const sampler = setInterval(() => (clientPeak = Math.max(clientPeak, process.memoryUsage().rss)), 20);
  try {
    const started = performance.now();
    let firstByte = 0;
    const accept = format === 'arrow' ? 'application/vnd.apache.arrow.stream' : 'application/x-ndjson';
    const res = await fetch(`${server.url}/v1/exports/trips${range}`, {
      headers: { authorization: `Bearer ${apiKey}`, accept },
    });
    if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}: ${await res.text()}`);
    let trips = 0;
    let bytes = 0;
    const counted = countBytes(res.body, (n) => {
      if (bytes === 0) firstByte = performance.now();
      bytes += n;
    });
    if (format === 'arrow') {
      for await (const batch of await RecordBatchReader.from(counted)) trips += batch.numRows;
    } else {
      for await (const chunk of counted) for (const byte of chunk) if (byte === 10) trips++;
    }
    const seconds = (performance.now() - started) / 1000;
    return {
      format,
      trips,
      bytes,
      seconds,
      tripsPerSecond: trips / seconds,
      firstByteSeconds: (firstByte - started) / 1000,
      serverIdleRssBytes,
      serverPeakRssBytes: procStatusBytes(server.pid, 'VmHWM'),
      clientPeakRssBytes: clientPeak,
      loadAverage: [loadBefore, loadavg()[0] as number],
    };
  } finally {
    clearInterval(sampler);
  }
}

interface Server {
  url: string;
  pid: number;
  /** The memory log's lines so far, one a batch. */
  memoryLines(): BatchMemory[];
  stop(): Promise<void>;
}

/** The real `serve.js` on a free loopback port, one process, ready (a snapshot open). */
async function startServer(dataDir: string, batchTrips: number | undefined, serverLog?: string): Promise<Server> {
  // the memory log costs two small DuckDB queries a batch (of 1,000 trips by default)
  const env = {
    ...process.env,
    DRIVING_API_EXPORT_MEMORY_LOG: '1',
    ...(batchTrips ? { DRIVING_API_EXPORT_BATCH_TRIPS: String(batchTrips) } : {}),
  };
  const child = spawn(
    process.execPath,
    [
      repoPath('jobs', 'serve.js'),
      '--data-dir',
      dataDir,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--no-log',
      '--no-metrics',
      '--workers',
      '1',
    ],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    if (serverLog) child.stderr?.on('data', (text: string | Buffer) => appendFileSync(serverLog, text));
    const memory: BatchMemory[] = [];
    let partial = '';
    child.stderr?.on('data', (text: string | Buffer) => {
      const lines = (partial + String(text)).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines)
        if (line.startsWith('{"export"')) memory.push(batchMemory(JSON.parse(line) as Record<string, number | string>));
    });
    const url = await listeningUrl(child);
    await waitReady(url, 120);
    return {
      url,
      pid: child.pid as number,
      memoryLines: () => memory,
      stop: async () => {
        child.kill('SIGTERM');
        await exited;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

function batchMemory(l: Record<string, number | string>): BatchMemory {
  return {
    exportId: String(l['export']),
    batch: l['batch'] as number,
    rssMiB: l['rssMiB'] as number,
    heapTotalMiB: l['heapTotalMiB'] as number,
    heapUsedMiB: l['heapUsedMiB'] as number,
    externalMiB: l['externalMiB'] as number,
    exportDuckdbMiB: l['exportDuckdbMiB'] as number,
  };
}

function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let tail = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      tail = (tail + text).slice(-4000);
      const match = /listening on (http:\/\/\S+)/.exec(tail);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) =>
      reject(new Error(`serve.js exited ${code} before listening: ${tail.trim().split('\n').slice(-3).join(' | ')}`)),
    );
  });
}

/** Starts the process's peak RSS (VmHWM) again from its RSS now (Linux's clear_refs 5; nothing elsewhere). */
function resetPeakRss(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not Linux, or not allowed: the peak stays the process's own since its start
  }
}

/** A field of /proc/PID/status in bytes (Linux; 0 elsewhere). */
function procStatusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const file = `/proc/${pid}/status`;
  if (!existsSync(file)) return 0;
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(file, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

async function* countBytes(body: ReadableStream<Uint8Array>, add: (n: number) => void): AsyncGenerator<Uint8Array> {
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    add(chunk.length);
    yield chunk;
  }
}
