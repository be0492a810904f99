import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Progress } from '../src/progress.js';

/** What one job process cost, measured from inside it (see rss-probe.ts). */
export interface ChildResult {
  label: string;
  exitCode: number | null;
  wallSeconds: number;
  peakRssBytes: number | null;
  cpuSeconds: number | null;
  stdout: string;
  /** The last lines of stderr, for a failure's reason. */
  stderrTail: string[];
}

export interface RunningChild {
  child: ChildProcess;
  done: Promise<ChildResult>;
}

export interface ChildOptions {
  cwd: string;
  probeDir: string;
  progress: Progress;
  env?: NodeJS.ProcessEnv;
  /** Forward the child's stderr lines as progress (jobs' own progress); default true. */
  echo?: boolean;
  /** Open an IPC channel (the load generator takes its stop message through it). */
  ipc?: boolean;
  /** Sees every stderr line (the server says where it listens there). */
  onStderrLine?: (line: string) => void;
}

const PROBE = fileURLToPath(new URL('./rss-probe.js', import.meta.url));
let sequence = 0;

/**
 * Starts `node <script> <args>` with the probe preloaded. The wall time runs from spawn to exit,
 * so it includes Node's and DuckDB's start-up like a cron run would.
 */
export function startNodeChild(label: string, script: string, args: string[], options: ChildOptions): RunningChild {
  mkdirSync(options.probeDir, { recursive: true });
  const probeFile = join(
    options.probeDir,
    `${String(++sequence).padStart(3, '0')}-${label.replace(/[^a-z0-9]+/gi, '-')}.json`,
  );
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', PROBE, script, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env, BENCH_PROBE_FILE: probeFile },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  const tail: string[] = [];
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      if (options.echo ?? true) options.progress(`  [${label}] ${line}`);
      options.onStderrLine?.(line);
    }
  });
  const done = new Promise<ChildResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (partial) tail.push(partial);
      const probe = existsSync(probeFile)
        ? (JSON.parse(readFileSync(probeFile, 'utf8')) as { maxRssKb: number; userCpuUs: number; systemCpuUs: number })
        : null;
      resolve({
        label,
        exitCode: code,
        wallSeconds: (performance.now() - started) / 1000,
        peakRssBytes: probe ? probe.maxRssKb * 1024 : null,
        cpuSeconds: probe ? (probe.userCpuUs + probe.systemCpuUs) / 1e6 : null,
        stdout,
        stderrTail: tail,
      });
    });
  });
  return { child, done };
}

/** Runs a job to its end. */
export function runNodeChild(
  label: string,
  script: string,
  args: string[],
  options: ChildOptions,
): Promise<ChildResult> {
  return startNodeChild(label, script, args, options).done;
}

/**
 * The `--json` result a job printed on stdout. A job that failed as a whole (no result, or
 * `{ok: false, error}`) becomes an error carrying its reason; a partial failure (load's exit 2 for
 * an unreadable file) is returned for the caller to judge.
 */
export function jobJson(result: ChildResult): Record<string, unknown> {
  const start = result.stdout.indexOf('{');
  let json: Record<string, unknown> | null = null;
  try {
    json = start >= 0 ? (JSON.parse(result.stdout.slice(start)) as Record<string, unknown>) : null;
  } catch {
    json = null;
  }
  if (json === null || (result.exitCode !== 0 && typeof json['error'] === 'string')) {
    const reason = json?.['error'] ?? result.stderrTail.slice(-3).join(' | ');
    throw new Error(`${result.label} exited ${result.exitCode}: ${String(reason)}`);
  }
  return json;
}
